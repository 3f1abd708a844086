import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorker, type TaskAbortedError } from "../packages/sdk/src/worker.js";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { type HttpProxy, startProxy } from "./helpers/http-proxy.js";
import { eventually, getTask, send } from "./helpers/leases.js";
import { gate, nextEvent, outline, recordEvents, runUntilSucceeded } from "./helpers/sdk-worker.js";

// The worker SDK as a pool (docs/api/leases.md#pool-leases-one-worker-many-agents):
// one worker serving many agents through POST /leases, against the real service,
// a proxy recording what it sends.
let app: TestApp;
let proxy: HttpProxy;
beforeAll(async () => {
  app = await startTestApp();
  proxy = await startProxy(app.baseUrl);
});
afterAll(async () => {
  await proxy.close();
  await app.close();
});

async function runningAgent(body: { type?: string; metadata?: Record<string, string> }): Promise<AgentOut> {
  const agent = await createAgent(app, body);
  expect((await send(app, "PATCH", `/agents/${agent.id}`, { status: "running" })).status).toBe(200);
  return agent;
}

const isRenewal = (method: string, path: string) => method === "PATCH" && /\/leases\/[^/]+$/.test(path);

describe("a pool worker", () => {
  it("serves 20 agents of a type through `concurrency` long polls, never more, and none per agent", async () => {
    const agents: AgentOut[] = [];
    for (let i = 0; i < 20; i++) {
      const agent = await runningAgent({ type: "supervisor" });
      for (let j = 0; j < 2; j++) await createTask(app, agent.id, { title: `a${i} t${j}` });
      agents.push(agent);
    }
    const spans: { start: number; end: number; agent: string }[] = [];
    const start = proxy.log.length;
    const worker = createWorker({
      baseUrl: proxy.baseUrl,
      agentType: "supervisor",
      concurrency: 3,
      waitSeconds: 20,
      handler: async (task) => {
        const span = { start: performance.now(), end: Number.POSITIVE_INFINITY, agent: task.agent_id };
        spans.push(span);
        await new Promise((resolve) => setTimeout(resolve, 20));
        span.end = performance.now();
        return { agent: task.agent_id };
      },
    });
    await runUntilSucceeded(worker, 40);

    const log = proxy.log.slice(start);
    const polls = log.filter((entry) => entry.method === "POST" && entry.path === "/leases");
    expect(polls.length).toBeGreaterThanOrEqual(40);
    expect(polls.every((poll) => JSON.stringify(poll.body).includes('"agent_type":"supervisor"'))).toBe(true);
    // No poll of one agent's own leases.
    expect(log.filter((entry) => entry.method === "POST" && /^\/agents\/[^/]+\/leases$/.test(entry.path))).toEqual([]);
    // At every moment a handler started or a poll was sent: handlers running plus polls waiting, at most 3.
    const intervals = [
      ...spans.map(({ start: from, end }) => [from, end] as const),
      ...polls.map(({ sentAt, answeredAt }) => [sentAt, answeredAt] as const),
    ];
    const busiest = Math.max(
      ...intervals.map(([at]) => intervals.filter(([from, to]) => from <= at && at < to).length),
    );
    expect(busiest).toBeLessThanOrEqual(3);
    // Every agent served, each task once, through its own agent's paths.
    expect(new Set(spans.map((span) => span.agent))).toEqual(new Set(agents.map((agent) => agent.id)));
    for (const agent of agents) {
      const { body: tasks } = await send<TaskOut[]>(app, "GET", `/agents/${agent.id}/tasks`);
      expect(tasks.map((task) => [task.status, task.result])).toEqual([
        ["succeeded", { agent: agent.id }],
        ["succeeded", { agent: agent.id }],
      ]);
    }
    const reports = log.filter((entry) => entry.method === "PATCH" && entry.path.includes("/tasks/"));
    expect(reports).toHaveLength(40);
    for (const report of reports) {
      const agentId = report.path.split("/")[2];
      expect(agents.some((agent) => agent.id === agentId)).toBe(true);
      expect(report.status).toBe(200);
    }
  });

  it("a cancellation of a pool lease's task reaches the handler, acknowledged under the task's agent", async () => {
    const agent = await runningAgent({ metadata: { pool: "cancel" } });
    const task = await createTask(app, agent.id, { title: "long" });
    let reason: unknown;
    const worker = createWorker({
      baseUrl: proxy.baseUrl,
      metadata: { pool: "cancel" },
      leaseSeconds: 6,
      handler: (_task, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            reason = signal.reason;
            reject(signal.reason);
          });
        }),
    });
    const recorded = recordEvents(worker);
    const leased = nextEvent(worker, "lease");
    const cancelled = nextEvent(worker, "cancelled");
    const running = worker.start();
    const { lease } = await leased;
    expect(lease.agent_id).toBe(agent.id);
    expect((await send(app, "PATCH", `/agents/${agent.id}/tasks/${task.id}`, { status: "cancelled" })).status).toBe(
      202,
    );
    expect((await cancelled).task).toMatchObject({ id: task.id, status: "cancelled" });
    await worker.stop();
    await running;
    expect((reason as TaskAbortedError).kind).toBe("cancelled");
    expect(outline(recorded)).toEqual(["lease long", "cancelled long"]);
    const acks = proxy.log.filter((entry) => entry.method === "PATCH" && entry.path.endsWith(`/tasks/${task.id}`));
    expect(acks.map(({ path, body, status }) => [path, body, status])).toEqual([
      [`/agents/${agent.id}/tasks/${task.id}`, { lease_id: lease.id, status: "cancelled" }, 200],
    ]);
  });

  it("a pool lease lost while the handler hung: the handler is aborted, nothing is sent for the task", async () => {
    const agent = await runningAgent({ metadata: { pool: "lost" } });
    const task = await createTask(app, agent.id, { title: "hangs" });
    const late = gate<{ late: true }>();
    let reason: unknown;
    const worker = createWorker({
      baseUrl: proxy.baseUrl,
      metadata: { pool: "lost" },
      leaseSeconds: 5,
      handler: (_task, { signal }) => {
        signal.addEventListener("abort", () => {
          reason = signal.reason;
        });
        return late.opened;
      },
    });
    proxy.intercept = ({ method, path }) =>
      isRenewal(method, path) && path.startsWith(`/agents/${agent.id}/`) ? new Promise(() => {}) : undefined;
    const lost = nextEvent(worker, "lost");
    const running = worker.start();
    try {
      expect(await lost).toMatchObject({ reason: "lease_expired", task: { id: task.id } });
      expect((reason as TaskAbortedError).kind).toBe("lease_lost");
      const settled = await eventually(
        () => getTask(app, task),
        (current) => current.status === "failed",
        15_000,
      );
      expect(settled).toMatchObject({ status: "failed", attempts: 1, error: { code: "lease_expired" } });
    } finally {
      proxy.intercept = () => undefined;
      late.open({ late: true });
      await worker.stop();
      await running;
    }
    const reports = proxy.log.filter((entry) => entry.method === "PATCH" && entry.path.includes(`/tasks/${task.id}`));
    expect(reports).toEqual([]);
  });

  it("stop() gives a pool lease's task back to its agent when its handler does not finish in time", async () => {
    const agent = await runningAgent({ metadata: { pool: "stop" } });
    const task = await createTask(app, agent.id, { title: "slow" });
    const worker = createWorker({
      baseUrl: proxy.baseUrl,
      metadata: { pool: "stop" },
      handler: (_task, { signal }) =>
        new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    });
    const recorded = recordEvents(worker);
    const leased = nextEvent(worker, "lease");
    const running = worker.start();
    const { lease } = await leased;
    const stoppedAt = performance.now();
    await worker.stop({ timeoutMs: 300 });
    await running;
    expect(performance.now() - stoppedAt).toBeLessThan(10_000);
    expect(outline(recorded)).toEqual(["lease slow", "released slow"]);
    const releases = proxy.log.filter((entry) => entry.method === "DELETE" && entry.path.includes(lease.id));
    expect(releases.map(({ path, status }) => [path, status])).toEqual([
      [`/agents/${agent.id}/leases/${lease.id}`, 204],
    ]);
    expect(await getTask(app, task)).toMatchObject({ status: "pending", attempts: 0, lease: null });
  });
});
