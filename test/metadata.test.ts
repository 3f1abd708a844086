import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statement } from "../src/db/index.js";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";

// docs/http.md: metadata on agents and tasks, its limits, PUT replaces, PATCH merges.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const send = (path: string, method: string, json: unknown) => app.request(path, { method, json });
const read = async <T>(res: Response) => (await res.json()) as T;
const keys = (count: number, value = "v") =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, value]));
const idsWith = async (path: string) => (await read<{ id: string }[]>(await app.request(path))).map((item) => item.id);

// Read through prepared statements: Prisma's first query would stall the event loop long enough to shed requests.
type Pair = { key: string; value: string };
const pairsOf = {
  agent_metadata: statement<Pair, [id: string]>(
    "test_agent_pairs",
    "SELECT key, value FROM agent_metadata WHERE agent_id = $1 ORDER BY key",
  ),
  task_metadata: statement<Pair, [id: string]>(
    "test_task_pairs",
    "SELECT key, value FROM task_metadata WHERE task_id = $1 ORDER BY key",
  ),
};
const updateEvents = statement<{ data: string }, [agentId: string]>(
  "test_agent_updated_events",
  "SELECT data FROM events WHERE agent_id = $1 AND type = 'agent.updated' ORDER BY id",
);

/** The pairs stored for filtering, as the database holds them. */
async function storedPairs(table: keyof typeof pairsOf, id: string) {
  const rows = await app.database.db.all(pairsOf[table], [id]);
  return Object.fromEntries(rows.map((row) => [row.key, row.value]));
}

describe("agents' metadata", () => {
  it("is stored at creation, returned as sent, and {} by default", async () => {
    const metadata = { team: "research", "cost.centre": "R-12", "z_-.": "ünïcødé 🦊" };
    const res = await send("/agents", "POST", { name: "a", type: "worker", metadata });
    expect(res.status).toBe(201);
    const agent = await read<AgentOut>(res);
    expect(agent.metadata).toEqual(metadata);
    expect(JSON.stringify(agent.metadata)).toBe(JSON.stringify(metadata));
    expect(await read(await app.request(`/agents/${agent.id}`))).toEqual(agent);
    expect(await storedPairs("agent_metadata", agent.id)).toEqual(metadata);
    expect((await createAgent(app)).metadata).toEqual({});
  });

  it("accepts the limits exactly: 50 keys, 40-character keys, 500-character values", async () => {
    const metadata = { ...keys(49, "x".repeat(500)), ["k".repeat(40)]: "🦊".repeat(500) };
    const agent = await createAgent(app, { metadata });
    expect(agent.metadata).toEqual(metadata);
    expect(Object.keys(await storedPairs("agent_metadata", agent.id))).toHaveLength(50);
  });

  it("PUT replaces it, and an absent metadata becomes {}", async () => {
    const agent = await createAgent(app, { metadata: { a: "1", b: "2" } });
    const put = async (body: Record<string, unknown>) => {
      const res = await send(`/agents/${agent.id}`, "PUT", { name: "a", type: "worker", ...body });
      expect(res.status).toBe(200);
      return read<AgentOut>(res);
    };
    expect((await put({ metadata: { c: "3" } })).metadata).toEqual({ c: "3" });
    expect(await storedPairs("agent_metadata", agent.id)).toEqual({ c: "3" });
    const cleared = await put({});
    expect(cleared.metadata).toEqual({});
    expect(cleared.version).toBe(agent.version + 2);
    expect(await storedPairs("agent_metadata", agent.id)).toEqual({});
  });

  it("PATCH merges it: a string sets a key, null removes it, the rest is kept", async () => {
    const agent = await createAgent(app, { metadata: { a: "1", b: "2" } });
    const res = await send(`/agents/${agent.id}`, "PATCH", { metadata: { b: null, c: "3", a: "one" } });
    expect(res.status).toBe(200);
    const patched = await read<AgentOut>(res);
    expect(patched).toEqual({
      ...agent,
      metadata: { a: "one", c: "3" },
      updated_at: expect.any(String),
      version: agent.version + 1,
    });
    expect(await storedPairs("agent_metadata", agent.id)).toEqual({ a: "one", c: "3" });
    // Removing a key that is not there, or setting a value it already has, changes nothing.
    const same = await read<AgentOut>(await send(`/agents/${agent.id}`, "PATCH", { metadata: { x: null, c: "3" } }));
    expect(same).toEqual(patched);
  });

  it("records the metadata change in the agent.updated event", async () => {
    const agent = await createAgent(app, { metadata: { a: "1" } });
    await send(`/agents/${agent.id}`, "PATCH", { metadata: { a: "2" } });
    const rows = await app.database.db.all(updateEvents, [agent.id]);
    expect(rows.map((row) => JSON.parse(row.data).changes)).toEqual([{ metadata: [{ a: "1" }, { a: "2" }] }]);
  });

  it.each([
    ["51 keys", keys(51), "metadata", "must have at most 50 keys"],
    ["a 41-character key", { ["k".repeat(41)]: "v" }, `metadata.${"k".repeat(41)}`, "keys must be"],
    ["an empty key", { "": "v" }, "metadata.", "keys must be"],
    ["a key with a space", { "a b": "v" }, "metadata.a b", "keys must be"],
    ["a 501-character value", { a: "x".repeat(501) }, "metadata.a", "must have at most 500 characters"],
    ["a number value", { a: 1 }, "metadata.a", "must be a string"],
    ["a null value", { a: null }, "metadata.a", "must be a string"],
    ["an object value", { a: { b: "c" } }, "metadata.a", "must be a string"],
    ["a value with U+0000", { a: "x\u0000" }, "metadata.a", "must not contain U+0000"],
    ["an array", ["a"], "metadata", "must be an object of string values"],
    ["a string", "a=b", "metadata", "must be an object of string values"],
    ["null", null, "metadata", "must be an object of string values"],
  ])("a create with %s is 400 and stores nothing", async (_, metadata, field, message) => {
    const before = await idsWith("/agents?limit=1000");
    const res = await send("/agents", "POST", { name: "a", type: "worker", metadata });
    expect(res.status).toBe(400);
    const body = await read<{ error: string; details: { issues: { field: string; message: string }[] } }>(res);
    expect(body.error).toBe("validation_error");
    expect(body.details.issues).toEqual([{ field, message: expect.stringContaining(message) }]);
    expect(await idsWith("/agents?limit=1000")).toEqual(before);
  });

  it("a __proto__ key is 400 on create, PUT and PATCH, and nothing changes", async () => {
    const agent = await createAgent(app, { metadata: { a: "1" } });
    const raw = (method: string, path: string, text: string) =>
      app.request(path, { method, headers: { "content-type": "application/json" }, body: text });
    const bodies: [string, string, string][] = [
      ["POST", "/agents", '{"name":"p","type":"worker","metadata":{"__proto__":"x"}}'],
      ["PUT", `/agents/${agent.id}`, '{"name":"p","type":"worker","metadata":{"__proto__":"x"}}'],
      ["PATCH", `/agents/${agent.id}`, '{"metadata":{"__proto__":"x"}}'],
      ["PATCH", `/agents/${agent.id}`, '{"metadata":{"__proto__":null}}'],
    ];
    const before = await idsWith("/agents?limit=1000");
    for (const [method, path, text] of bodies) {
      const res = await raw(method, path, text);
      expect(res.status).toBe(400);
      expect((await read<{ details: unknown }>(res)).details).toEqual({
        issues: [{ field: "metadata.__proto__", message: "must not be __proto__" }],
      });
    }
    expect(await idsWith("/agents?limit=1000")).toEqual(before);
    expect(await read(await app.request(`/agents/${agent.id}`))).toEqual(agent);
  });

  it("a PATCH that would leave more than 50 keys is 400 and changes nothing", async () => {
    const agent = await createAgent(app, { metadata: keys(50) });
    const res = await send(`/agents/${agent.id}`, "PATCH", { metadata: { extra: "v" } });
    expect(res.status).toBe(400);
    expect(await read(res)).toEqual({
      error: "validation_error",
      message: "Request validation failed: metadata: must have at most 50 keys once merged",
      details: { issues: [{ field: "metadata", message: "must have at most 50 keys once merged" }] },
    });
    expect(await read(await app.request(`/agents/${agent.id}`))).toEqual(agent);
    // Removing one key makes room for another in the same PATCH.
    const swapped = await send(`/agents/${agent.id}`, "PATCH", { metadata: { k0: null, extra: "v" } });
    expect(swapped.status).toBe(200);
    expect(Object.keys((await read<AgentOut>(swapped)).metadata)).toHaveLength(50);
  });
});

describe("tasks' metadata", () => {
  it("is stored at creation, replaced key by key through PATCH, and copied for filtering", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id, { metadata: { batch: "7", owner: "ana" } });
    expect(task.metadata).toEqual({ batch: "7", owner: "ana" });
    expect(await storedPairs("task_metadata", task.id)).toEqual({ batch: "7", owner: "ana" });
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    const res = await send(path, "PATCH", { metadata: { owner: null, stage: "2" } });
    expect(res.status).toBe(200);
    expect(await read<TaskOut>(res)).toEqual({
      ...task,
      metadata: { batch: "7", stage: "2" },
      updated_at: expect.any(String),
      version: task.version + 1,
    });
    expect(await storedPairs("task_metadata", task.id)).toEqual({ batch: "7", stage: "2" });
    expect((await createTask(app, agent.id)).metadata).toEqual({});
  });

  it("keeps the metadata through a status change, a lease's settling and deletion of the agent", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id, { metadata: { a: "1" } });
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    const running = await read<TaskOut>(await send(path, "PATCH", { status: "running" }));
    expect(running.metadata).toEqual({ a: "1" });
    expect(await storedPairs("task_metadata", task.id)).toEqual({ a: "1" });
    expect((await app.request(`/agents/${agent.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await storedPairs("task_metadata", task.id)).toEqual({});
  });

  it.each([
    ["51 keys", keys(51)],
    ["a 41-character key", { ["k".repeat(41)]: "v" }],
    ["a 501-character value", { a: "x".repeat(501) }],
    ["a number value", { a: 1 }],
  ])("a create or PATCH with %s is 400 and stores nothing", async (_, metadata) => {
    const agent = await createAgent(app);
    const created = await send(`/agents/${agent.id}/tasks`, "POST", { title: "t", metadata });
    expect(created.status).toBe(400);
    expect(await read(await app.request(`/agents/${agent.id}/tasks`))).toEqual([]);
    const task = await createTask(app, agent.id);
    const patched = await send(`/agents/${agent.id}/tasks/${task.id}`, "PATCH", { metadata });
    expect(patched.status).toBe(400);
    expect(await read(await app.request(`/agents/${agent.id}/tasks/${task.id}`))).toEqual(task);
  });
});
