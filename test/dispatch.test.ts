import { setTimeout as sleep } from "node:timers/promises";
import { createTRPCClient, httpLink } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { AppRouter } from "../src/modules/index.js";
import type { LeaseOut } from "../src/modules/leases/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { eventLog, leasePath, runningAgent, send, takeLease, taskPath } from "./helpers/leases.js";

// docs/api/agents.md (concurrency), docs/api/tasks.md (concurrency_key), docs/api/leases.md
// (limits, the fair pick, pool leases), docs/api/events.md (final events, renewals).
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const noLimits = { max_running: null, max_running_per_key: null };
const missingId = "00000000-0000-4000-8000-00000000dead";

async function limitedAgent(concurrency: object, body: Record<string, unknown> = {}): Promise<AgentOut> {
  const created = await send<AgentOut>(app, "POST", "/agents", {
    name: "limited",
    type: "worker",
    concurrency,
    ...body,
  });
  expect(created.status, created.text).toBe(201);
  const running = await send<AgentOut>(app, "PATCH", `/agents/${created.body.id}`, { status: "running" });
  expect(running.status).toBe(200);
  return running.body;
}

/** Creates the tasks one by one (so created_at orders them: see createTask), with `body` each. */
async function createTasks(agentId: string, count: number, body: Record<string, unknown> = {}) {
  const tasks: TaskOut[] = [];
  for (let i = 0; i < count; i++) tasks.push(await createTask(app, agentId, { title: `t${i}`, ...body }));
  return tasks;
}

const succeed = async (lease: LeaseOut) => {
  const done = await send<TaskOut>(app, "PATCH", taskPath(lease.task), { lease_id: lease.id, status: "succeeded" });
  expect(done.status, done.text).toBe(200);
  return done.body;
};

const lease = (agentId: string, body: Record<string, unknown> = {}) =>
  send<LeaseOut>(app, "POST", leasePath(agentId), body);
const pool = (body: Record<string, unknown> = {}) => send<LeaseOut>(app, "POST", "/leases", body);

describe("an agent's concurrency", () => {
  it("is set at creation, by PATCH (the limits given) and by PUT (the limits left out are none), with its events", async () => {
    const created = await send<AgentOut>(app, "POST", "/agents", {
      name: "c",
      type: "worker",
      concurrency: { max_running: 8 },
    });
    expect(created.status).toBe(201);
    expect(created.body.concurrency).toEqual({ max_running: 8, max_running_per_key: null });
    const events = await eventLog(app, created.body.id);
    const path = `/agents/${created.body.id}`;
    const patched = await send<AgentOut>(app, "PATCH", path, { concurrency: { max_running_per_key: 2 } });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...created.body,
      concurrency: { max_running: 8, max_running_per_key: 2 },
      updated_at: patched.body.updated_at,
      version: 2,
    });
    const unlimited = await send<AgentOut>(app, "PATCH", path, { concurrency: { max_running: null } });
    expect(unlimited.body.concurrency).toEqual({ max_running: null, max_running_per_key: 2 });
    // The same limits again change nothing: no new version, no event.
    const same = await send<AgentOut>(app, "PATCH", path, { concurrency: { max_running_per_key: 2 } });
    expect(same.body).toEqual(unlimited.body);
    const replaced = await send<AgentOut>(app, "PUT", path, { name: "c", type: "worker" });
    expect(replaced.status).toBe(200);
    expect(replaced.body.concurrency).toEqual(noLimits);
    const put = await send<AgentOut>(app, "PUT", path, { name: "c", type: "worker", concurrency: { max_running: 1 } });
    expect(put.body.concurrency).toEqual({ max_running: 1, max_running_per_key: null });
    expect((await send<AgentOut>(app, "GET", path)).body).toEqual(put.body);
    expect((await events()).map((event) => [event.type, event.data.changes])).toEqual([
      ["agent.updated", { concurrency: [created.body.concurrency, patched.body.concurrency] }],
      ["agent.updated", { concurrency: [patched.body.concurrency, unlimited.body.concurrency] }],
      ["agent.updated", { concurrency: [unlimited.body.concurrency, noLimits] }],
      ["agent.updated", { concurrency: [noLimits, put.body.concurrency] }],
    ]);
  });

  it("is 400 naming the field for a limit out of 1–10,000 or not an integer, and nothing changes", async () => {
    const agent = await createAgent(app);
    for (const value of [0, 10_001, 1.5, "3", true, -1]) {
      for (const field of ["max_running", "max_running_per_key"]) {
        const created = await send<{ message: string }>(app, "POST", "/agents", {
          name: "x",
          type: "worker",
          concurrency: { [field]: value },
        });
        expect(created.status, `${field} ${value}`).toBe(400);
        expect(created.body.message).toContain(`concurrency.${field}`);
        const patched = await send(app, "PATCH", `/agents/${agent.id}`, { concurrency: { [field]: value } });
        expect(patched.status).toBe(400);
      }
    }
    expect((await send(app, "PATCH", `/agents/${agent.id}`, { concurrency: 3 })).status).toBe(400);
    expect((await send<AgentOut>(app, "GET", `/agents/${agent.id}`)).body).toEqual(agent);
  });
});

describe("a task's concurrency_key", () => {
  it("is set at creation, changed while pending, and filters the list", async () => {
    const agent = await createAgent(app);
    const keyed = await createTask(app, agent.id, { concurrency_key: "customer-1" });
    expect(keyed.concurrency_key).toBe("customer-1");
    const plain = await createTask(app, agent.id);
    expect(plain.concurrency_key).toBeNull();
    const other = await createTask(app, agent.id, { concurrency_key: "customer-2" });
    const moved = await send<TaskOut>(app, "PATCH", taskPath(plain), { concurrency_key: "customer-1" });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({
      ...plain,
      concurrency_key: "customer-1",
      updated_at: moved.body.updated_at,
      version: 2,
    });
    const list = async (query: string) =>
      (await send<TaskOut[]>(app, "GET", `/agents/${agent.id}/tasks?${query}`)).body.map((task) => task.id);
    expect(await list("concurrency_key=customer-1")).toEqual([keyed.id, plain.id]);
    expect(await list("concurrency_key=customer-1&order=desc")).toEqual([plain.id, keyed.id]);
    expect(await list("concurrency_key=customer-2")).toEqual([other.id]);
    expect(await list("concurrency_key=customer-1&limit=1")).toEqual([keyed.id]);
    expect(await list("concurrency_key=nobody")).toEqual([]);
    const counted = await send<TaskOut[]>(
      app,
      "GET",
      `/agents/${agent.id}/tasks?concurrency_key=customer-1&include_total=true`,
    );
    expect(counted.headers.get("x-total-count")).toBe("2");
    expect(await list("concurrency_key=customer-1&status=pending")).toEqual([keyed.id, plain.id]);
    const removed = await send<TaskOut>(app, "PATCH", taskPath(keyed), { concurrency_key: null });
    expect(removed.body.concurrency_key).toBeNull();
    expect(await list("concurrency_key=customer-1")).toEqual([plain.id]);
  });

  it("is 400 when empty or over 100 characters; 409 changed on a task that is not pending", async () => {
    const agent = await runningAgent(app);
    for (const concurrency_key of ["", "k".repeat(101), 5, null]) {
      const created = await send<{ message: string }>(app, "POST", `/agents/${agent.id}/tasks`, {
        title: "t",
        concurrency_key,
      });
      expect(created.status, String(concurrency_key)).toBe(400);
      expect(created.body.message).toContain("concurrency_key");
    }
    expect((await send(app, "GET", `/agents/${agent.id}/tasks?concurrency_key=`)).status).toBe(400);
    const task = await createTask(app, agent.id, { concurrency_key: "a" });
    const held = await takeLease(app, agent.id);
    const refused = await send<{ details: unknown }>(app, "PATCH", taskPath(task), { concurrency_key: "b" });
    expect(refused.status).toBe(409);
    expect(refused.body.details).toEqual({ field: "concurrency_key", status: "running" });
    // The same key is no change, and so no conflict.
    expect((await send(app, "PATCH", taskPath(task), { concurrency_key: "a" })).status).toBe(200);
    await succeed(held);
  });
});

describe("limits on the claim", () => {
  it("max_running: no lease past it; a finished task frees its slot", async () => {
    const agent = await limitedAgent({ max_running: 2 });
    const tasks = await createTasks(agent.id, 4);
    const first = await takeLease(app, agent.id);
    const second = await takeLease(app, agent.id);
    expect((await lease(agent.id)).status).toBe(204);
    await succeed(first);
    const third = await takeLease(app, agent.id);
    expect((await lease(agent.id)).status).toBe(204);
    // Released, expired or cancelled: any end of a running task frees the slot.
    expect((await send(app, "DELETE", leasePath(agent.id, second.id))).status).toBe(204);
    // Pending again with run_at = now: behind the one never leased.
    const again = await takeLease(app, agent.id);
    expect(again.task_id).toBe(tasks[3]?.id);
    expect((await lease(agent.id)).status).toBe(204);
    await succeed(third);
    await succeed(again);
  });

  it("max_running_per_key: a key at its limit waits, other keys and tasks without a key go on", async () => {
    const agent = await limitedAgent({ max_running_per_key: 1 });
    const a = await createTasks(agent.id, 3, { concurrency_key: "a" });
    const b = await createTasks(agent.id, 1, { concurrency_key: "b" });
    const none = await createTasks(agent.id, 2);
    const taken = [await takeLease(app, agent.id), await takeLease(app, agent.id), await takeLease(app, agent.id)];
    expect(taken.map((l) => l.task_id)).toEqual([a[0]?.id, b[0]?.id, none[0]?.id]);
    expect((await lease(agent.id)).status).toBe(204);
    await succeed(taken[0] as LeaseOut);
    expect((await takeLease(app, agent.id)).task_id).toBe(a[1]?.id);
    await succeed(taken[2] as LeaseOut);
    expect((await takeLease(app, agent.id)).task_id).toBe(none[1]?.id);
    expect((await lease(agent.id)).status).toBe(204);
  });

  it("a lowered limit takes nothing back, and grants nothing until the running are under it", async () => {
    const agent = await limitedAgent({ max_running: 3 });
    await createTasks(agent.id, 5);
    const held = [await takeLease(app, agent.id), await takeLease(app, agent.id), await takeLease(app, agent.id)];
    expect((await send(app, "PATCH", `/agents/${agent.id}`, { concurrency: { max_running: 1 } })).status).toBe(200);
    await succeed(held[0] as LeaseOut);
    expect((await lease(agent.id)).status).toBe(204);
    await succeed(held[1] as LeaseOut);
    expect((await lease(agent.id)).status).toBe(204);
    await succeed(held[2] as LeaseOut);
    await takeLease(app, agent.id);
  });

  it("claims at once, served together, keep both limits and pick as one after another would", async () => {
    const agent = await limitedAgent({ max_running: 5, max_running_per_key: 2 });
    const a = await createTasks(agent.id, 4, { concurrency_key: "a" });
    const b = await createTasks(agent.id, 4, { concurrency_key: "b" });
    const c = await createTasks(agent.id, 1, { concurrency_key: "c" });
    const answers = await Promise.all(Array.from({ length: 12 }, () => lease(agent.id)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(5).fill(201), ...Array(7).fill(204)]);
    const leased = answers.filter((answer) => answer.status === 201).map((answer) => answer.body.task_id);
    // Fewest running per key first, then run_at: a, b, c, then a and b again; never a third of a key.
    expect(leased.sort()).toEqual([a[0], a[1], b[0], b[1], c[0]].map((task) => task?.id).sort());
    expect((await lease(agent.id)).status).toBe(204);
  });

  it("a long poll held back by a limit is answered when a slot frees", async () => {
    const agent = await limitedAgent({ max_running: 1 });
    const [, second] = await createTasks(agent.id, 2);
    const first = await takeLease(app, agent.id);
    let answered = false;
    const waiting = lease(agent.id, { wait_seconds: 20 }).then((answer) => {
      answered = true;
      return answer;
    });
    await sleep(300);
    expect(answered).toBe(false);
    await succeed(first);
    const got = await waiting;
    expect(got.status).toBe(201);
    expect(got.body.task_id).toBe(second?.id);
  });
});

describe("the fair pick", () => {
  it("at equal priority, the key with the fewest running first; a crowded key does not hold back another", async () => {
    const agent = await runningAgent(app);
    const crowded = await createTasks(agent.id, 1000, { concurrency_key: "big" });
    const few = await createTasks(agent.id, 10, { concurrency_key: "small" });
    const order: string[] = [];
    const held: LeaseOut[] = [];
    // A worker with two slots: each lease is held until the next one is taken.
    for (let i = 0; i < 30; i++) {
      const taken = await takeLease(app, agent.id);
      order.push(taken.task_id);
      held.push(taken);
      if (held.length === 2) await succeed(held.shift() as LeaseOut);
    }
    const ids = (tasks: TaskOut[]) => tasks.map((task) => task.id);
    // big, small, big, small, … : every task of "small" among the first twenty leases, not after a thousand.
    const pairs = Array.from({ length: 10 }, (_, i) => [crowded[i]?.id, few[i]?.id]).flat() as string[];
    expect(order.slice(0, 20)).toEqual(pairs);
    expect(order.slice(20)).toEqual(ids(crowded.slice(10, 20)));
    for (const open of held) await succeed(open);
  });

  it("priority comes first; tasks without a key form one key", async () => {
    const agent = await runningAgent(app);
    const noKey = await createTasks(agent.id, 2);
    const keyed = await createTasks(agent.id, 2, { concurrency_key: "k" });
    const urgent = await createTask(app, agent.id, { concurrency_key: "k", priority: 9 });
    const order = [];
    for (let i = 0; i < 5; i++) order.push((await takeLease(app, agent.id)).task_id);
    // Urgent first, whatever its key; then no key (0 running) before k (1 running); then, both at 1
    // running, the earlier task (no key's second); then k's two, the only ones left.
    expect(order).toEqual([urgent.id, noKey[0]?.id, noKey[1]?.id, keyed[0]?.id, keyed[1]?.id]);
  });
});

describe("pool leases: POST /leases", () => {
  /** `count` running agents with `tasks` tasks each, created agent by agent, marked by a metadata pair. */
  async function fleet(count: number, tasks: number, pair: Record<string, string>, type = "worker") {
    const agents: AgentOut[] = [];
    for (let i = 0; i < count; i++) {
      const agent = await createAgent(app, { type, metadata: pair });
      expect((await send(app, "PATCH", `/agents/${agent.id}`, { status: "running" })).status).toBe(200);
      await createTasks(agent.id, tasks);
      agents.push(agent);
    }
    return agents;
  }

  it("takes turns among the matching agents at equal priority: 201, Location under the task's agent", async () => {
    const agents = await fleet(3, 4, { pool: "turns" });
    const order: string[] = [];
    for (let i = 0; i < 9; i++) {
      const answer = await pool({ metadata: { pool: "turns" }, worker: "p" });
      expect(answer.status).toBe(201);
      expect(answer.headers.get("location")).toBe(`/agents/${answer.body.agent_id}/leases/${answer.body.id}`);
      expect(answer.body.worker).toBe("p");
      expect(answer.body.task.agent_id).toBe(answer.body.agent_id);
      order.push(answer.body.agent_id);
      await succeed(answer.body);
    }
    const round = order.slice(0, 3);
    expect(new Set(round)).toEqual(new Set(agents.map((agent) => agent.id)));
    expect(order).toEqual([...round, ...round, ...round]);
  });

  it("one agent's backlog does not starve another's: 1,000 queued and 10, the ten all start before the first's 50th", async () => {
    const [crowded] = await fleet(1, 1000, { pool: "backlog" });
    const [few] = await fleet(1, 10, { pool: "backlog" });
    const order: string[] = [];
    for (let i = 0; i < 40; i++) {
      const answer = await pool({ metadata: { pool: "backlog" } });
      expect(answer.status).toBe(201);
      order.push(answer.body.agent_id);
      await succeed(answer.body);
    }
    const lastOfFew = order.lastIndexOf((few as AgentOut).id);
    const crowdedBefore = order.slice(0, lastOfFew).filter((id) => id === crowded?.id).length;
    expect(order.filter((id) => id === few?.id)).toHaveLength(10);
    expect(crowdedBefore).toBeLessThan(50);
  });

  it("an Idempotency-Key answers its retry with the same lease, leasing nothing more", async () => {
    await fleet(1, 2, { pool: "kept" });
    const key = `pool-${Date.now()}`;
    const request = () =>
      app.request("/leases", {
        method: "POST",
        json: { metadata: { pool: "kept" } },
        headers: { "idempotency-key": key },
      });
    const first = await request();
    expect(first.status).toBe(201);
    const lease = (await first.json()) as LeaseOut;
    const again = await request();
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual(lease);
    const { body: running } = await send<TaskOut[]>(app, "GET", `/agents/${lease.agent_id}/tasks?status=running`);
    expect(running.map((task) => task.id)).toEqual([lease.task_id]);
  });

  it("serves the highest priority across agents first", async () => {
    const [low, high] = await fleet(2, 2, { pool: "priority" });
    const urgent = await createTask(app, (high as AgentOut).id, { priority: 9 });
    const first = await pool({ metadata: { pool: "priority" } });
    expect(first.body.task_id).toBe(urgent.id);
    expect(low).toBeDefined();
  });

  it("keeps each agent's own limits", async () => {
    const limited = await limitedAgent({ max_running: 1 }, { metadata: { pool: "limits" } });
    await createTasks(limited.id, 3);
    const [free] = await fleet(1, 3, { pool: "limits" });
    const taken = [];
    for (let i = 0; i < 4; i++) {
      const answer = await pool({ metadata: { pool: "limits" } });
      expect(answer.status).toBe(201);
      taken.push(answer.body.agent_id);
    }
    expect(taken.filter((id) => id === limited.id)).toHaveLength(1);
    expect(taken.filter((id) => id === free?.id)).toHaveLength(3);
    expect((await pool({ metadata: { pool: "limits" } })).status).toBe(204);
  });

  it("selects by agent_ids, agent_type or metadata; only running agents; renewed, released and finished as any lease", async () => {
    const [one, two] = await fleet(2, 2, { pool: "select" });
    const [supervisor] = await fleet(1, 1, { pool: "select-other" }, "supervisor");
    const paused = await createAgent(app, { metadata: { pool: "select" } });
    await createTask(app, paused.id);
    const byIds = await pool({ agent_ids: [(two as AgentOut).id] });
    expect(byIds.body.agent_id).toBe(two?.id);
    const byType = await pool({ agent_type: "supervisor" });
    expect(byType.body.agent_id).toBe(supervisor?.id);
    expect((await pool({ agent_type: "supervisor" })).status).toBe(204);
    const byPair = await pool({ metadata: { pool: "select" } });
    expect([one?.id, two?.id]).toContain(byPair.body.agent_id);
    expect((await pool({ metadata: { pool: "select", missing: "pair" } })).status).toBe(204);
    // The pool's lease is its agent's: renewed, released and finished under it.
    const path = leasePath(byIds.body.agent_id, byIds.body.id);
    const renewed = await send<LeaseOut>(app, "PATCH", path, { duration_seconds: 120 });
    expect(renewed.status).toBe(200);
    expect((await send(app, "DELETE", path)).status).toBe(204);
    await succeed(byType.body);
    await succeed(byPair.body);
  });

  it("with no selector, serves every running agent of the project", async () => {
    const own = await startTestApp();
    try {
      const none = await send<LeaseOut>(own, "POST", "/leases", {});
      expect(none.status).toBe(204);
      const agent = await runningAgent(own);
      const task = await createTask(own, agent.id);
      const answer = await send<LeaseOut>(own, "POST", "/leases", {});
      expect(answer.status).toBe(201);
      expect(answer.body.task_id).toBe(task.id);
    } finally {
      await own.close();
    }
  });

  it("waits for a task of a matching agent, and is not answered by another's", async () => {
    const [member] = await fleet(1, 0, { pool: "wait" });
    const [outsider] = await fleet(1, 0, { pool: "not-wait" });
    let answered = false;
    const waiting = pool({ metadata: { pool: "wait" }, wait_seconds: 20 }).then((answer) => {
      answered = true;
      return answer;
    });
    await sleep(300);
    await createTask(app, (outsider as AgentOut).id);
    await sleep(300);
    expect(answered).toBe(false);
    const task = await createTask(app, (member as AgentOut).id);
    const got = await waiting;
    expect(got.status).toBe(201);
    expect(got.body.task_id).toBe(task.id);
  });

  it("is 404 when agent_ids names an agent the project does not have, and 400 for a bad selector", async () => {
    const [agent] = await fleet(1, 1, { pool: "errors" });
    const unknown = await send(app, "POST", "/leases", { agent_ids: [(agent as AgentOut).id, missingId] });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: "Agent not found" });
    // As everywhere, an id that is not a UUID names no agent.
    expect((await send(app, "POST", "/leases", { agent_ids: ["not-a-uuid"] })).status).toBe(404);
    for (const [body, field] of [
      [{ agent_ids: [] }, "agent_ids"],
      [{ agent_ids: Array.from({ length: 101 }, () => missingId) }, "agent_ids"],
      [{ agent_ids: [missingId, missingId] }, "agent_ids"],
      [{ agent_type: "robot" }, "agent_type"],
      [{ agent_type: "worker", metadata: { pool: "errors" } }, "metadata"],
      [{ agent_ids: [missingId], agent_type: "worker" }, "agent_type"],
      [{ metadata: { pool: 1 } }, "metadata"],
      [{ wait_seconds: 21 }, "wait_seconds"],
      [{ duration_seconds: 4 }, "duration_seconds"],
    ] as const) {
      const answer = await send<{ error: string; message: string }>(app, "POST", "/leases", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toBe("validation_error");
      expect(answer.body.message).toContain(field);
    }
    // Nothing was leased.
    expect((await send<TaskOut[]>(app, "GET", `/agents/${agent?.id}/tasks?status=running`)).body).toEqual([]);
  });

  it("over tRPC: leases.claim, null for none", async () => {
    const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc` })] });
    const [agent] = await fleet(1, 1, { pool: "trpc" });
    const got = await client.leases.claim.mutate({ metadata: { pool: "trpc" } });
    expect(got?.agent_id).toBe(agent?.id);
    expect(await client.leases.claim.mutate({ metadata: { pool: "trpc" } })).toBeNull();
  });
});

describe("events a watcher can use", () => {
  it("final changes are task.succeeded, task.failed, task.cancelled; other changes stay task.updated", async () => {
    const agent = await createAgent(app);
    const events = await eventLog(app, agent.id);
    const a = await createTask(app, agent.id);
    const b = await createTask(app, agent.id);
    const c = await createTask(app, agent.id);
    await send(app, "PATCH", taskPath(a), { status: "running" });
    const done = await send<TaskOut>(app, "PATCH", taskPath(a), { status: "succeeded", result: 1 });
    await send(app, "PATCH", taskPath(b), { status: "running" });
    const failed = await send<TaskOut>(app, "PATCH", taskPath(b), { status: "failed" });
    const cancelled = await send<TaskOut>(app, "PATCH", taskPath(c), { status: "cancelled" });
    // An edit of a final task is a change, not a finish.
    const renamed = await send<TaskOut>(app, "PATCH", taskPath(a), { title: "renamed" });
    const log = (await events()).filter((event) => event.type !== "task.created");
    expect(log.map((event) => [event.type, event.task_id, event.data.changes])).toEqual([
      ["task.updated", a.id, { status: ["pending", "running"] }],
      ["task.succeeded", a.id, { status: ["running", "succeeded"], result: [null, 1] }],
      ["task.updated", b.id, { status: ["pending", "running"] }],
      ["task.failed", b.id, { status: ["running", "failed"] }],
      ["task.cancelled", c.id, { status: ["pending", "cancelled"] }],
      ["task.updated", a.id, { title: ["task", "renamed"] }],
    ]);
    expect(log[1]?.data.task).toEqual(done.body);
    expect(log[3]?.data.task).toEqual(failed.body);
    expect(log[4]?.data.task).toEqual(cancelled.body);
    expect(log[5]?.data.task).toEqual(renamed.body);
    // task.* still matches them all; each may be asked for by name.
    const listed = await send<{ type: string }[]>(
      app,
      "GET",
      `/events?agent_id=${agent.id}&types=task.succeeded,task.cancelled`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.map((event) => event.type)).toEqual(["task.succeeded", "task.cancelled"]);
    const all = await send<{ type: string }[]>(app, "GET", `/events?agent_id=${agent.id}&types=task.*`);
    expect(all.body.map((event) => event.type)).toContain("task.failed");
  });

  it("a long task renewed many times adds no event between its task.leased and its task.succeeded", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id);
    const events = await eventLog(app, agent.id);
    const held = await takeLease(app, agent.id, { duration_seconds: 30 });
    // A 10-minute task renewed every 20 s: 30 renewals.
    for (let i = 0; i < 30; i++) {
      const renewed = await send<LeaseOut>(app, "PATCH", leasePath(agent.id, held.id), {});
      expect(renewed.status).toBe(200);
      expect(renewed.body.task.version).toBe(held.task.version);
      expect(renewed.body.task.updated_at).toBe(held.task.updated_at);
    }
    const done = await succeed(held);
    expect(done.version).toBe(held.task.version + 1);
    expect((await events()).map((event) => [event.type, event.task_id])).toEqual([
      ["task.leased", task.id],
      ["task.succeeded", task.id],
    ]);
  });
});
