import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, createWorker, type WorkerOptions } from "../packages/sdk/src/worker.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createUser, tokenFor } from "./helpers/auth.js";
import { type HttpProxy, type LoggedExchange, startProxy } from "./helpers/http-proxy.js";
import { getTask } from "./helpers/leases.js";
import { nextEvent, outline, recordEvents } from "./helpers/sdk-worker.js";

// What the worker SDK does when the service answers 429, 503, nothing at all,
// or refuses its credentials (docs/api/leases.md#the-worker-sdk). The
// service requires credentials for writes; a proxy in front of it stands in
// for an overloaded service or a broken network.
let app: TestApp;
let proxy: HttpProxy;
const apiKey = "sdk-key-one";
beforeAll(async () => {
  app = await startTestApp({ AUTH_POLICY: "writes", API_KEYS: apiKey });
  proxy = await startProxy(app.baseUrl);
});
afterAll(async () => {
  await proxy.close();
  await app.close();
});

const withKey = { headers: { "x-api-key": apiKey } };
async function agentWithTask(title: string) {
  const agentRes = await app.request("/agents", { method: "POST", json: { name: "a", type: "worker" }, ...withKey });
  const agent = (await agentRes.json()) as { id: string };
  await app.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "running" }, ...withKey });
  const taskRes = await app.request(`/agents/${agent.id}/tasks`, { method: "POST", json: { title }, ...withKey });
  return { agent, task: (await taskRes.json()) as { id: string; agent_id: string } };
}

/** Runs a worker on the agent until its first task succeeds. */
async function runOne(options: Omit<WorkerOptions<unknown, unknown>, "handler" | "agentId">, agentId: string) {
  const worker = createWorker({ ...options, agentId, handler: () => ({ ok: true }) } as WorkerOptions<
    unknown,
    unknown
  >);
  const recorded = recordEvents(worker);
  const succeeded = nextEvent(worker, "succeeded");
  const running = worker.start();
  await succeeded;
  await worker.stop();
  await running;
  return recorded;
}

const gapsOf = (exchanges: LoggedExchange[]) =>
  exchanges.slice(1).map((exchange, i) => exchange.sentAt - (exchanges[i] as LoggedExchange).answeredAt);

describe("an overloaded service", () => {
  it("429 and 503 are tried again after their Retry-After", async () => {
    const { agent, task } = await agentWithTask("busy");
    let refusals = 0;
    // Two polls get 503, the report 429; each says to come back in 1 s.
    proxy.intercept = ({ method, path }) => {
      if (!path.startsWith(`/agents/${agent.id}/`)) return undefined;
      const poll = method === "POST" && refusals < 2;
      const report = method === "PATCH" && path.includes("/tasks/") && refusals === 2;
      if (!poll && !report) return undefined;
      refusals++;
      const status = poll ? 503 : 429;
      return { status, headers: { "retry-after": "1" }, body: { error: "unavailable", message: "busy" } };
    };
    try {
      const recorded = await runOne({ baseUrl: proxy.baseUrl, apiKey }, agent.id);
      expect(outline(recorded)).toEqual([
        `error POST /agents/${agent.id}/leases answered 503: busy`,
        `error POST /agents/${agent.id}/leases answered 503: busy`,
        "lease busy",
        `error PATCH /agents/${agent.id}/tasks/${task.id} answered 429: busy`,
        "succeeded busy",
      ]);
    } finally {
      proxy.intercept = () => undefined;
    }
    const mine = proxy.log.filter((exchange) => exchange.path.startsWith(`/agents/${agent.id}/`));
    const polls = mine.filter((exchange) => exchange.method === "POST");
    const reports = mine.filter((exchange) => exchange.method === "PATCH" && exchange.path.includes("/tasks/"));
    expect(polls.map((exchange) => exchange.status)).toEqual([503, 503, 201]);
    expect(reports.map((exchange) => exchange.status)).toEqual([429, 200]);
    // Each retry came after the second it was told to wait (timers may round down by a millisecond).
    for (const gap of [...gapsOf(polls), ...gapsOf(reports)]) expect(gap).toBeGreaterThanOrEqual(990);
    expect(await getTask(app, task)).toMatchObject({ status: "succeeded", result: { ok: true } });
  });

  it("network errors are tried again after a growing delay", async () => {
    const { agent, task } = await agentWithTask("flaky network");
    let dropped = 0;
    proxy.intercept = ({ method, path }) =>
      method === "POST" && path === `/agents/${agent.id}/leases` && dropped++ < 3 ? "drop" : undefined;
    try {
      const recorded = await runOne({ baseUrl: proxy.baseUrl, apiKey }, agent.id);
      // A connection closed without an answer.
      expect(outline(recorded)).toEqual([
        ...Array(3).fill(`error POST /agents/${agent.id}/leases failed: socket hang up (ECONNRESET)`),
        "lease flaky network",
        "succeeded flaky network",
      ]);
    } finally {
      proxy.intercept = () => undefined;
    }
    const polls = proxy.log.filter((exchange) => exchange.path === `/agents/${agent.id}/leases`);
    expect(polls.map((exchange) => exchange.status)).toEqual([0, 0, 0, 201]);
    // Backoff with jitter: 125–250 ms, then 250–500 ms, then 500–1000 ms.
    const [first, second, third] = gapsOf(polls) as [number, number, number];
    expect(first).toBeGreaterThanOrEqual(120);
    expect(second).toBeGreaterThanOrEqual(245);
    expect(third).toBeGreaterThanOrEqual(495);
    expect(await getTask(app, task)).toMatchObject({ status: "succeeded" });
  });
});

describe("credentials", () => {
  it("an API key or a bearer token is sent with every request", async () => {
    const keyed = await agentWithTask("with a key");
    await runOne({ baseUrl: app.baseUrl, apiKey }, keyed.agent.id);
    expect(await getTask(app, keyed.task)).toMatchObject({ status: "succeeded" });

    const token = await tokenFor(app, await createUser(app));
    const signed = await agentWithTask("with a token");
    await runOne({ baseUrl: app.baseUrl, token }, signed.agent.id);
    expect(await getTask(app, signed.task)).toMatchObject({ status: "succeeded" });
  });

  it.each([
    ["no credentials", {}, 401, "Not authenticated (the worker stopped: its token is missing, invalid or expired)"],
    ["a bad token", { token: "not-a-token" }, 401, "Could not validate credentials (the worker stopped: its token"],
    [
      "a bad API key",
      { apiKey: "sdk-key-two" },
      403,
      "Invalid API key (the worker stopped: its API key is not accepted)",
    ],
  ])(
    "%s: the worker stops, start() rejects with the service's answer, and an error event tells it",
    async (_name, credentials, status, message) => {
      const { agent, task } = await agentWithTask("refused");
      const worker = createWorker({
        baseUrl: app.baseUrl,
        ...credentials,
        agentId: agent.id,
        concurrency: 3,
        handler: () => null,
      });
      const errors: Error[] = [];
      worker.on("error", (error) => errors.push(error));
      const failure = await worker.start().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ApiError);
      expect(failure).toMatchObject({ status, method: "POST", path: `/agents/${agent.id}/leases` });
      expect((failure as Error).message).toContain(`POST /agents/${agent.id}/leases answered ${status}: ${message}`);
      // One error event: the other slots' refusals come after the worker has stopped.
      expect(errors).toEqual([failure]);
      await worker.stop();
      expect(await getTask(app, task)).toMatchObject({ status: "pending", lease: null });
    },
  );
});

describe("options", () => {
  it("are checked when the worker is created", () => {
    const base = { baseUrl: app.baseUrl, handler: () => null };
    const refusals = [
      [{ ...base }, "give exactly one of agentId, agentType, agentIds or metadata"],
      [
        { ...base, agentId: "a", agentType: "t" },
        "give exactly one of agentId, agentType, agentIds or metadata, not agentId and agentType",
      ],
      [{ ...base, agentId: "a", leaseSeconds: 4 }, "leaseSeconds must be an integer from 5 to 3600, not 4"],
      [{ ...base, agentId: "a", waitSeconds: 0 }, "waitSeconds must be an integer from 1 to 20, not 0"],
      [{ ...base, agentId: "a", concurrency: 1.5 }, "concurrency must be an integer from 1 to 10000, not 1.5"],
      [{ ...base, agentId: "a", baseUrl: "127.0.0.1:8000" }, "baseUrl must be an http(s) URL, not 127.0.0.1:8000"],
      [{ ...base, agentId: "a", workerName: "" }, "workerName must have 1 to 100 characters"],
    ] as const;
    for (const [options, message] of refusals) {
      expect(() => createWorker(options as unknown as WorkerOptions<unknown, unknown>)).toThrow(
        `createWorker: ${message}`,
      );
    }
  });

  it("a pool selector asks POST /leases, with one long poll per slot", async () => {
    const bodies: unknown[] = [];
    // Held by the proxy, as long polls wait (the service's pool leases are not this test's subject).
    proxy.intercept = ({ method, path, body }) => {
      if (method !== "POST" || path !== "/leases") return undefined;
      bodies.push(body);
      return new Promise(() => {});
    };
    try {
      const worker = createWorker({
        baseUrl: proxy.baseUrl,
        apiKey,
        agentType: "crawler",
        concurrency: 2,
        leaseSeconds: 30,
        waitSeconds: 5,
        workerName: "pool-1",
        handler: () => null,
      });
      const running = worker.start();
      while (bodies.length < 2) await sleep(10);
      await sleep(200);
      await worker.stop();
      await running;
    } finally {
      proxy.intercept = () => undefined;
    }
    expect(bodies).toEqual(
      Array(2).fill({ agent_type: "crawler", worker: "pool-1", duration_seconds: 30, wait_seconds: 5 }),
    );
  });
});
