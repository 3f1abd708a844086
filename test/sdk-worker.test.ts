import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorker, NonRetryableError, TaskAbortedError } from "../packages/sdk/src/worker.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTask } from "./helpers/factories.js";
import { type HttpProxy, type LoggedExchange, startProxy } from "./helpers/http-proxy.js";
import { eventually, getTask, leasePath, runningAgent, send } from "./helpers/leases.js";
import { gate, nextEvent, outline, recordEvents, runUntilSucceeded } from "./helpers/sdk-worker.js";

// The worker SDK (packages/sdk, docs/api/leases.md#the-worker-sdk) against the
// real service; a proxy between them records what the worker sends.
let app: TestApp;
let proxy: HttpProxy;
beforeAll(async () => {
  app = await startTestApp({ TASK_RETRY_BASE_SECONDS: "0.2" });
  proxy = await startProxy(app.baseUrl);
});
afterAll(async () => {
  await proxy.close();
  await app.close();
});

const isLeasePoll = (path: string) => /^\/agents\/[^/]+\/leases$/.test(path);
const isRenewal = (method: string, path: string) => method === "PATCH" && /\/leases\/[^/]+$/.test(path);

describe("a handler's outcome", () => {
  it("is the task's result, a retried failure, or a failure for good with a NonRetryableError", async () => {
    const agent = await runningAgent(app);
    await createTask(app, agent.id, { title: "adds", priority: 9, input: { a: 2, b: 3 } });
    await createTask(app, agent.id, { title: "flaky", priority: 8, max_attempts: 2 });
    await createTask(app, agent.id, { title: "refused", priority: 7, max_attempts: 3 });
    const worker = createWorker<{ a?: number; b?: number } | null, { sum: number }>({
      baseUrl: app.baseUrl,
      agentId: agent.id,
      waitSeconds: 1,
      handler: (task) => {
        if (task.title === "flaky" && task.attempts === 0)
          throw Object.assign(new Error("timed out"), { code: "ETIMEDOUT" });
        if (task.title === "refused") {
          throw new NonRetryableError("no such page", { code: "not_found", details: { url: "https://example.com" } });
        }
        return { sum: (task.input?.a ?? 0) + (task.input?.b ?? 0) };
      },
    });
    const recorded = recordEvents(worker);
    const done = nextEvent(worker, "succeeded", ({ task }) => task.title === "flaky");
    const started = worker.start();
    await done;
    await worker.stop();
    await expect(started).resolves.toBeUndefined();

    expect(outline(recorded)).toEqual([
      "lease adds",
      "succeeded adds",
      "lease flaky",
      "failed flaky",
      "lease refused",
      "failed refused",
      "lease flaky",
      "succeeded flaky",
    ]);
    const { body: tasks } = await send<TaskOut[]>(app, "GET", `/agents/${agent.id}/tasks`);
    const [adds, flaky, refused] = ["adds", "flaky", "refused"].map((title) => tasks.find((t) => t.title === title));
    expect(adds).toMatchObject({ status: "succeeded", result: { sum: 5 }, attempts: 0, lease: null });
    expect(flaky).toMatchObject({
      status: "succeeded",
      result: { sum: 0 },
      attempts: 1,
      error: { code: "ETIMEDOUT", message: "timed out", details: null },
    });
    expect(refused).toMatchObject({
      status: "failed",
      attempts: 1,
      max_attempts: 3,
      error: { code: "not_found", message: "no such page", details: { url: "https://example.com" } },
    });
    const failures = recorded.flatMap((entry) => (entry.event === "failed" ? [entry.value] : []));
    expect(failures.map(({ task, retrying }) => [task.title, task.status, retrying])).toEqual([
      ["flaky", "pending", true],
      ["refused", "failed", false],
    ]);
    expect(failures[1]?.error).toBeInstanceOf(NonRetryableError);
  });
});

describe("concurrency", () => {
  it("runs at most `concurrency` tasks at once, with one long poll per free slot and never more", async () => {
    const agent = await runningAgent(app);
    for (let i = 0; i < 10; i++) await createTask(app, agent.id, { title: `task ${i}` });
    const spans: { id: string; start: number; end: number }[] = [];
    // The first four wait for one another: the test cannot pass without four at once.
    const firstWave = gate();
    let started = 0;
    const worker = createWorker({
      baseUrl: proxy.baseUrl,
      agentId: agent.id,
      concurrency: 4,
      waitSeconds: 20,
      handler: async (task) => {
        const span = { id: task.id, start: performance.now(), end: Number.POSITIVE_INFINITY };
        spans.push(span);
        if (++started === 4) firstWave.open();
        if (started <= 4) await firstWave.opened;
        await sleep(50);
        span.end = performance.now();
        return null;
      },
    });
    await runUntilSucceeded(worker, 10);

    expect(new Set(spans.map((span) => span.id)).size).toBe(10);
    expect(spans).toHaveLength(10);
    const polls = proxy.log.filter((entry) => entry.method === "POST" && isLeasePoll(entry.path));
    expect(polls.filter((poll) => poll.path === `/agents/${agent.id}/leases`).length).toBeGreaterThanOrEqual(10);
    // At every moment a handler started or a poll was sent: handlers running plus polls waiting.
    const intervals = [
      ...spans.map(({ start, end }) => [start, end] as const),
      ...polls
        .filter((poll) => poll.path.includes(agent.id))
        .map(({ sentAt, answeredAt }) => [sentAt, answeredAt] as const),
    ];
    const busiest = Math.max(
      ...intervals.map(([at]) => intervals.filter(([from, to]) => from <= at && at < to).length),
    );
    expect(busiest).toBe(4);
    const handlersAtOnce = Math.max(
      ...spans.map(({ start }) => spans.filter((s) => s.start <= start && start < s.end).length),
    );
    expect(handlersAtOnce).toBe(4);
  });
  it("holds many slots without Node.js taking the worker's signals for a leak", async () => {
    const agent = await runningAgent(app);
    for (let i = 0; i < 20; i++) await createTask(app, agent.id, { title: `many ${i}` });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const worker = createWorker({ baseUrl: app.baseUrl, agentId: agent.id, concurrency: 16, handler: () => null });
      await runUntilSucceeded(worker, 20);
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.map((warning) => `${warning.name}: ${warning.message}`)).toEqual([]);
  });
});

describe("cancellation", () => {
  it("reaches the handler's signal at the first renewal after it was asked for, and the task ends cancelled", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, { title: "long" });
    const aborted = { at: Number.NaN, reason: undefined as unknown };
    const worker = createWorker({
      baseUrl: proxy.baseUrl,
      agentId: agent.id,
      leaseSeconds: 6,
      handler: (_task, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            aborted.at = performance.now();
            aborted.reason = signal.reason;
            reject(signal.reason);
          });
        }),
    });
    const recorded = recordEvents(worker);
    const leased = nextEvent(worker, "lease");
    const cancelled = nextEvent(worker, "cancelled");
    const running = worker.start();
    await leased;
    const cancel = await send(app, "PATCH", `/agents/${agent.id}/tasks/${task.id}`, { status: "cancelled" });
    expect(cancel.status).toBe(202);
    const askedAt = performance.now();
    expect((await cancelled).task).toMatchObject({ id: task.id, status: "cancelled", cancel_requested: true });
    await worker.stop();
    await running;

    expect(aborted.reason).toBeInstanceOf(TaskAbortedError);
    expect((aborted.reason as TaskAbortedError).kind).toBe("cancelled");
    // The first renewal that told it aborted the handler; at most one renewal was sent
    // between the cancellation and the abort (one in flight then may have told it already).
    const renewals = proxy.log.filter((entry) => isRenewal(entry.method, entry.path) && entry.path.includes(agent.id));
    const told = (renewal: LoggedExchange) => (renewal.answered as { task: TaskOut }).task.cancel_requested;
    const telling = renewals.find(told) as LoggedExchange;
    expect(telling.answeredAt).toBeGreaterThan(askedAt);
    expect(telling.answeredAt).toBeLessThanOrEqual(aborted.at);
    const between = renewals.filter((renewal) => renewal.sentAt > askedAt && renewal.sentAt < aborted.at);
    expect(between.length).toBeLessThanOrEqual(1);
    expect(between.filter((renewal) => !told(renewal))).toEqual([]);
    expect(outline(recorded)).toEqual(["lease long", "cancelled long"]);
    expect(await getTask(app, task)).toMatchObject({ status: "cancelled", attempts: 0, lease: null });
    // The acknowledgement went through the lease.
    const reports = proxy.log.filter((entry) => entry.method === "PATCH" && entry.path.endsWith(`/tasks/${task.id}`));
    expect(reports.map(({ body, status }) => [body, status])).toEqual([
      [{ lease_id: (telling.answered as { id: string }).id, status: "cancelled" }, 200],
    ]);
  });
});

describe("a lost lease", () => {
  it("expired while renewals failed: aborts the handler, and its late result is never sent", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, { title: "hangs" });
    const late = gate<{ late: true }>();
    let reason: unknown;
    const worker = createWorker({
      baseUrl: proxy.baseUrl,
      agentId: agent.id,
      leaseSeconds: 5,
      // Ignores its signal: it returns only when the test lets it.
      handler: (_task, { signal }) => {
        signal.addEventListener("abort", () => {
          reason = signal.reason;
        });
        return late.opened;
      },
    });
    const recorded = recordEvents(worker);
    // The worker's renewals of this lease never get an answer.
    proxy.intercept = ({ method, path }) =>
      isRenewal(method, path) && path.startsWith(`/agents/${agent.id}/`) ? new Promise(() => {}) : undefined;
    const lost = nextEvent(worker, "lost");
    const running = worker.start();
    try {
      expect(await lost).toMatchObject({ reason: "lease_expired", task: { id: task.id } });
      expect((reason as TaskAbortedError).kind).toBe("lease_lost");
      // The service settles the task: its only attempt ended by the lease's expiry.
      const settled = await eventually(
        () => getTask(app, task),
        (current) => current.status === "failed",
        15_000,
      );
      expect(settled).toMatchObject({ status: "failed", attempts: 1, error: { code: "lease_expired" }, result: null });
      // The handler comes back late; its slot polls again once its outcome is dropped.
      const pollsBefore = proxy.log.length;
      const polledAgain = new Promise<void>((resolve) => {
        proxy.intercept = ({ method, path }) => {
          if (method === "POST" && path === `/agents/${agent.id}/leases`) resolve();
          return undefined;
        };
      });
      late.open({ late: true });
      await polledAgain;
      expect(pollsBefore).toBeGreaterThan(0);
    } finally {
      proxy.intercept = () => undefined;
      await worker.stop();
      await running;
    }
    expect(outline(recorded).filter((line) => !line.startsWith("error"))).toEqual(["lease hangs", "lost hangs"]);
    const reports = proxy.log.filter((entry) => entry.method === "PATCH" && entry.path.includes("/tasks/"));
    expect(reports.filter((entry) => entry.path.startsWith(`/agents/${agent.id}/`))).toEqual([]);
    expect(await getTask(app, task)).toMatchObject({ status: "failed", result: null });
  });

  it("given back by someone else while the handler ran: the late result is refused (409) and dropped", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, { title: "taken" });
    const first = gate<{ run: number }>();
    let runs = 0;
    const worker = createWorker({
      baseUrl: proxy.baseUrl,
      agentId: agent.id,
      leaseSeconds: 60,
      handler: () => (++runs === 1 ? first.opened : { run: runs }),
    });
    const recorded = recordEvents(worker);
    const leased = nextEvent(worker, "lease");
    const succeeded = nextEvent(worker, "succeeded");
    const running = worker.start();
    const { lease } = await leased;
    expect((await send(app, "DELETE", leasePath(agent.id, lease.id))).status).toBe(204);
    first.open({ run: 1 });
    // Pending again, the task is leased again, and its second run is the one reported.
    expect((await succeeded).task).toMatchObject({ id: task.id, status: "succeeded", result: { run: 2 } });
    await worker.stop();
    await running;

    expect(outline(recorded)).toEqual(["lease taken", "lost taken", "lease taken", "succeeded taken"]);
    expect(recorded[1]).toMatchObject({ event: "lost", value: { reason: "refused" } });
    const reports = proxy.log.filter((entry) => entry.method === "PATCH" && entry.path.endsWith(`/tasks/${task.id}`));
    expect(reports.map(({ body, status, answered }) => [body, status, answered])).toEqual([
      [
        { lease_id: lease.id, status: "succeeded", result: { run: 1 } },
        409,
        expect.objectContaining({ details: expect.objectContaining({ lease: "lost" }) }),
      ],
      [expect.objectContaining({ status: "succeeded", result: { run: 2 } }), 200, expect.anything()],
    ]);
    expect(await getTask(app, task)).toMatchObject({ status: "succeeded", result: { run: 2 }, attempts: 0 });
  });
});

describe("stop()", () => {
  it("lets running handlers finish within its bound, then aborts the rest and gives their tasks back", async () => {
    const agent = await runningAgent(app);
    const quick = await createTask(app, agent.id, { title: "quick", priority: 9 });
    const stuck = await createTask(app, agent.id, { title: "stuck", priority: 8 });
    const stopping = gate();
    let stuckReason: unknown;
    const worker = createWorker({
      baseUrl: app.baseUrl,
      agentId: agent.id,
      concurrency: 2,
      handler: async (task, { signal }) => {
        if (task.title === "quick") {
          await stopping.opened;
          await sleep(200);
          return { finished: true };
        }
        signal.addEventListener("abort", () => {
          stuckReason = signal.reason;
        });
        return new Promise(() => {});
      },
    });
    const recorded = recordEvents(worker);
    let leases = 0;
    const bothLeased = new Promise<void>((resolve) => worker.on("lease", () => ++leases === 2 && resolve()));
    const running = worker.start();
    await bothLeased;
    const timeoutMs = 1500;
    const stopAt = performance.now();
    const stopped = worker.stop({ timeoutMs });
    stopping.open();
    await stopped;
    const took = performance.now() - stopAt;
    await expect(running).resolves.toBeUndefined();

    // The stuck handler held it to its bound; the bound held (a generous guard for a loaded machine).
    expect(took).toBeGreaterThanOrEqual(timeoutMs);
    expect(took).toBeLessThan(timeoutMs + 10_000);
    expect((stuckReason as TaskAbortedError).kind).toBe("stopping");
    expect(outline(recorded).slice(2)).toEqual(["succeeded quick", "released stuck"]);
    expect(await getTask(app, quick)).toMatchObject({ status: "succeeded", result: { finished: true } });
    expect(await getTask(app, stuck)).toMatchObject({ status: "pending", attempts: 0, lease: null, error: null });
    // Stopped: no long poll takes the released task.
    await sleep(300);
    expect(await getTask(app, stuck)).toMatchObject({ status: "pending", lease: null });
  });
});
