import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { LeaseOut } from "../src/modules/leases/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { call, type ServiceProcess, servicesOnTestDatabase } from "./helpers/service.js";

// Fair dispatch across real processes (docs/api/leases.md): two service instances
// on one database, many lease requests at once on both, limits that must hold at
// every instant, and a slot freed on one instance waking a long poll on the other.
const { database, start } = servicesOnTestDatabase({ TASK_RETRY_BASE_SECONDS: "0.5", TASK_RETRY_MAX_SECONDS: "1" });

interface Span {
  task: string;
  key: string;
  from: number;
  to: number;
}

/** The most spans open at once: ends sort before starts at the same instant (a slot freed, then taken). */
function mostAtOnce(spans: Span[]): number {
  const edges = spans.flatMap((span) => [
    [span.from, 1],
    [span.to, -1],
  ]);
  edges.sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
  let open = 0;
  let most = 0;
  for (const [, step] of edges) {
    open += step as number;
    most = Math.max(most, open);
  }
  return most;
}

/** Every lease of the agent's tasks as a span, from its task.leased to the event that ended it, read from the event log. */
async function leaseSpans(agentId: string, keys: Map<string, string>): Promise<Span[]> {
  const events = await database().db.prisma.event.findMany({ where: { agentId }, orderBy: { id: "asc" } });
  const open = new Map<string, number>();
  const spans: Span[] = [];
  for (const event of events) {
    if (event.taskId === null) continue;
    const at = event.occurredAt.getTime();
    if (event.type === "task.leased") {
      expect(open.has(event.taskId), "a task leased twice at once").toBe(false);
      open.set(event.taskId, at);
      continue;
    }
    const from = open.get(event.taskId);
    const data = JSON.parse(event.data) as { task: TaskOut };
    if (from !== undefined && data.task.status !== "running") {
      spans.push({ task: event.taskId, key: keys.get(event.taskId) ?? "", from, to: at });
      open.delete(event.taskId);
    }
  }
  expect(open.size, "every lease ended").toBe(0);
  return spans;
}

async function runningAgent(baseUrl: string, concurrency: object): Promise<AgentOut> {
  const agent = await call<AgentOut>(baseUrl, "POST", "/agents", { name: "fleet", type: "worker", concurrency });
  expect(agent.status).toBe(201);
  expect((await call(baseUrl, "PATCH", `/agents/${agent.body.id}`, { status: "running" })).status).toBe(200);
  return agent.body;
}

describe("two service processes on one database", () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  beforeAll(async () => {
    [a, b] = await Promise.all([start(), start()]);
  }, 120_000);

  it("12 workers on both instances, 300 tasks over 5 keys: never past max_running 8 or max_running_per_key 2; " +
    "every task succeeds exactly once, those of a worker that died included", async () => {
    const agent = await runningAgent(a.baseUrl, { max_running: 8, max_running_per_key: 2 });
    const keys = new Map<string, string>();
    const creations = [];
    for (let i = 0; i < 300; i++) {
      const body = { title: `t${i}`, concurrency_key: `key-${i % 5}`, max_attempts: 3 };
      creations.push(call<TaskOut>((i % 2 ? a : b).baseUrl, "POST", `/agents/${agent.id}/tasks`, body));
      if (creations.length === 20) {
        for (const created of await Promise.all(creations.splice(0))) {
          expect(created.status).toBe(201);
          keys.set(created.body.id, created.body.concurrency_key as string);
        }
      }
    }
    let succeeded = 0;
    // Three workers of four slots; the third dies after a few tasks each slot, its leases left to expire.
    const slot = async (worker: number, index: number) => {
      const service = (worker + index) % 2 ? a : b;
      let taken = 0;
      while (succeeded < 300) {
        const answer = await call<LeaseOut>(service.baseUrl, "POST", `/agents/${agent.id}/leases`, {
          worker: `w${worker}-${index}`,
          duration_seconds: 5,
          wait_seconds: 2,
        });
        if (answer.status === 204) continue;
        expect(answer.status).toBe(201);
        taken++;
        if (worker === 2 && taken === 5) return;
        await sleep(Math.random() * 20);
        const done = await call<TaskOut>(service.baseUrl, "PATCH", `/agents/${agent.id}/tasks/${answer.body.task_id}`, {
          lease_id: answer.body.id,
          status: "succeeded",
          result: { by: `w${worker}-${index}` },
        });
        expect(done.status).toBe(200);
        succeeded++;
      }
    };
    await Promise.all([0, 1, 2].flatMap((worker) => [0, 1, 2, 3].map((index) => slot(worker, index))));

    const tasks = await database().db.prisma.task.findMany({ where: { agentId: agent.id } });
    expect(tasks).toHaveLength(300);
    expect(tasks.filter((task) => task.status === "succeeded")).toHaveLength(300);
    // The dead worker's four leases expired and were retried: an attempt each.
    expect(tasks.filter((task) => task.attempts === 1)).toHaveLength(4);
    const events = await database().db.prisma.event.findMany({ where: { agentId: agent.id, type: "task.succeeded" } });
    expect(new Set(events.map((event) => event.taskId)).size).toBe(300);
    expect(events).toHaveLength(300);

    const spans = await leaseSpans(agent.id, keys);
    expect(spans).toHaveLength(304);
    expect(mostAtOnce(spans)).toBeLessThanOrEqual(8);
    // Not a test that never ran anything at once: the workers kept the agent busy.
    expect(mostAtOnce(spans)).toBeGreaterThanOrEqual(4);
    for (let k = 0; k < 5; k++) {
      expect(mostAtOnce(spans.filter((span) => span.key === `key-${k}`)), `key-${k}`).toBeLessThanOrEqual(2);
    }
  }, 240_000);

  it("a slot freed through one instance answers a long poll waiting on the other", async () => {
    const agent = await runningAgent(a.baseUrl, { max_running: 1 });
    for (let i = 0; i < 2; i++) {
      expect((await call(a.baseUrl, "POST", `/agents/${agent.id}/tasks`, { title: `t${i}` })).status).toBe(201);
    }
    const first = await call<LeaseOut>(a.baseUrl, "POST", `/agents/${agent.id}/leases`, {});
    expect(first.status).toBe(201);
    let answered = false;
    const waiting = call<LeaseOut>(b.baseUrl, "POST", `/agents/${agent.id}/leases`, { wait_seconds: 20 }).then(
      (answer) => {
        answered = true;
        return answer;
      },
    );
    await sleep(500);
    expect(answered, "held back by max_running").toBe(false);
    const finishedAt = Date.now();
    const done = await call(a.baseUrl, "PATCH", `/agents/${agent.id}/tasks/${first.body.task_id}`, {
      lease_id: first.body.id,
      status: "succeeded",
    });
    expect(done.status).toBe(200);
    const second = await waiting;
    expect(second.status).toBe(201);
    expect(second.body.task_id).not.toBe(first.body.task_id);
    // Woken by the finish's notification, not by the end of its wait (20 s).
    expect(second.at - finishedAt).toBeLessThan(10_000);
  }, 60_000);

  it("a pool lease on one instance is woken by a task created through the other, and keeps the agent's limit", async () => {
    const agent = await runningAgent(a.baseUrl, { max_running: 1 });
    await call(a.baseUrl, "PATCH", `/agents/${agent.id}`, { metadata: { pool: "processes" } });
    const waiting = call<LeaseOut>(b.baseUrl, "POST", "/leases", { metadata: { pool: "processes" }, wait_seconds: 20 });
    await sleep(500);
    const createdAt = Date.now();
    const task = await call<TaskOut>(a.baseUrl, "POST", `/agents/${agent.id}/tasks`, { title: "pooled" });
    const got = await waiting;
    expect(got.status).toBe(201);
    expect(got.body.task_id).toBe(task.body.id);
    expect(got.at - createdAt).toBeLessThan(10_000);
    await call(a.baseUrl, "POST", `/agents/${agent.id}/tasks`, { title: "held back" });
    expect((await call(a.baseUrl, "POST", "/leases", { metadata: { pool: "processes" } })).status).toBe(204);
  }, 60_000);
});
