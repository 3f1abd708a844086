import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { statement } from "../src/db/index.js";
import { ordinalsPerTransaction } from "../src/db/log-order.js";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import { eventLogHead, readEvents } from "../src/modules/events/sql.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { testProvider } from "./helpers/databases.js";
import { createAgent, createTask } from "./helpers/factories.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const send = async <T>(method: string, path: string, json?: unknown) => {
  const res = await app.request(path, { method, json });
  return { status: res.status, body: (res.status === 204 ? undefined : await res.json()) as T };
};

// Each test sees only the events its own requests record.
let mark: bigint;
beforeEach(async () => {
  mark = await eventLogHead(app.database.db);
});
const newest = statement<{ id: bigint | number | null }>("test_outbox_newest", "SELECT MAX(id) AS id FROM events");

/**
 * The events recorded since `mark`, once readers may see them all. On
 * PostgreSQL an event shows once every transaction that could still commit a
 * smaller id has ended (docs/api/events.md), and a transaction just starting in
 * another test file's database counts until the server can place it: the
 * newest event may show a few milliseconds after its write was answered.
 */
async function recorded() {
  const written = BigInt((await app.database.db.get(newest, []))?.id ?? 0);
  const deadline = Date.now() + 5000;
  let events = await readEvents(app.database.db, { projectId: defaultProjectId, after: mark, limit: 1000 });
  while ((events.at(-1)?.id ?? mark) < written && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    events = await readEvents(app.database.db, { projectId: defaultProjectId, after: mark, limit: 1000 });
  }
  return events.map(({ data, ...event }) => ({ ...event, data: JSON.parse(data) }));
}

describe("agents' writes record their events", () => {
  it("POST /agents: agent.created with the Agent as answered", async () => {
    const agent = await createAgent(app, { name: "watched" });
    expect(await recorded()).toEqual([
      {
        id: expect.any(BigInt),
        project_id: defaultProjectId,
        type: "agent.created",
        occurred_at: agent.created_at,
        agent_id: agent.id,
        task_id: null,
        data: { agent },
      },
    ]);
  });

  it("PATCH: agent.updated with the agent after the change and the changed fields", async () => {
    const agent = await createAgent(app);
    mark = await eventLogHead(app.database.db);
    const { body } = await send<AgentOut>("PATCH", `/agents/${agent.id}`, { status: "running", name: "renamed" });
    expect(body.version).toBe(2);
    expect(await recorded()).toEqual([
      {
        id: expect.any(BigInt),
        project_id: defaultProjectId,
        type: "agent.updated",
        occurred_at: body.updated_at,
        agent_id: agent.id,
        task_id: null,
        data: { agent: body, changes: { name: ["agent", "renamed"], status: ["idle", "running"] } },
      },
    ]);
  });

  it("PUT: agent.updated naming only what changed; the same PUT again records nothing", async () => {
    const agent = await createAgent(app, { name: "same", type: "worker" });
    mark = await eventLogHead(app.database.db);
    const { body } = await send<AgentOut>("PUT", `/agents/${agent.id}`, { name: "same", type: "supervisor" });
    const again = await send<AgentOut>("PUT", `/agents/${agent.id}`, { name: "same", type: "supervisor" });
    expect(again.body).toEqual(body);
    expect((await recorded()).map((event) => event.data)).toEqual([
      { agent: body, changes: { type: ["worker", "supervisor"] } },
    ]);
  });

  it("records nothing, and keeps the version, for a no-op, a refused or an invalid write", async () => {
    const agent = await createAgent(app);
    mark = await eventLogHead(app.database.db);
    const path = `/agents/${agent.id}`;
    expect((await send("PATCH", path, { status: "idle", name: agent.name })).status).toBe(200);
    expect((await send("PATCH", path, { status: "paused" })).status).toBe(409);
    expect((await send("PATCH", path, { name: "" })).status).toBe(400);
    expect((await send("PUT", path, { name: "x" })).status).toBe(400);
    expect((await send("PATCH", "/agents/00000000-0000-4000-8000-000000000000", { name: "x" })).status).toBe(404);
    expect(await recorded()).toEqual([]);
    expect((await send<AgentOut>("GET", path)).body).toEqual(agent);
  });

  it("DELETE: one task.deleted per task (as they were, in list order), then agent.deleted", async () => {
    const agent = await createAgent(app);
    const first = await createTask(app, agent.id, { title: "first" });
    const second = (await send<TaskOut>("PATCH", `/agents/${agent.id}/tasks/${first.id}`, { status: "running" })).body;
    const third = await createTask(app, agent.id, { title: "third" });
    const before = (await send<AgentOut>("GET", `/agents/${agent.id}`)).body;
    mark = await eventLogHead(app.database.db);
    expect((await send("DELETE", `/agents/${agent.id}`)).status).toBe(204);
    const events = await recorded();
    expect(events).toEqual([
      ...[second, third].map((task) => ({
        id: expect.any(BigInt),
        project_id: defaultProjectId,
        type: "task.deleted",
        occurred_at: expect.stringMatching(iso),
        agent_id: agent.id,
        task_id: task.id,
        data: { task },
      })),
      {
        id: expect.any(BigInt),
        project_id: defaultProjectId,
        type: "agent.deleted",
        occurred_at: expect.stringMatching(iso),
        agent_id: agent.id,
        task_id: null,
        data: { agent: before },
      },
    ]);
  });
});

describe("tasks' writes record their events", () => {
  it("POST, PATCH, DELETE: task.created, task.updated with changes, task.deleted with the task as it was", async () => {
    const agent = await createAgent(app);
    mark = await eventLogHead(app.database.db);
    const task = await createTask(app, agent.id, { title: "t", input: { z: 1, a: [true, null] } });
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    const running = (await send<TaskOut>("PATCH", path, { status: "running", result: { partial: 1 } })).body;
    const renamed = (await send<TaskOut>("PATCH", path, { title: "t2", description: "d", priority: 9 })).body;
    expect(renamed.version).toBe(3);
    expect((await send("DELETE", path)).status).toBe(204);
    const event = (type: string, data: unknown, occurred_at: unknown) => ({
      id: expect.any(BigInt),
      project_id: defaultProjectId,
      type,
      occurred_at,
      agent_id: agent.id,
      task_id: task.id,
      data,
    });
    const events = await recorded();
    expect(events).toEqual([
      event("task.created", { task }, task.created_at),
      event(
        "task.updated",
        { task: running, changes: { status: ["pending", "running"], result: [null, { partial: 1 }] } },
        running.updated_at,
      ),
      event(
        "task.updated",
        { task: renamed, changes: { title: ["t", "t2"], description: [null, "d"], priority: [5, 9] } },
        renamed.updated_at,
      ),
      event("task.deleted", { task: renamed }, expect.stringMatching(iso)),
    ]);
    // The JSON of the task is kept exactly, key order included.
    const created = events[0]?.data as { task: TaskOut } | undefined;
    expect(JSON.stringify(created?.task.input)).toBe('{"z":1,"a":[true,null]}');
  });

  it("records nothing for a refused creation, a no-op, an illegal transition or a missing task", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    for (const status of ["running", "stopped"]) await send("PATCH", `/agents/${agent.id}`, { status });
    mark = await eventLogHead(app.database.db);
    expect((await send("POST", `/agents/${agent.id}/tasks`, { title: "refused" })).status).toBe(409);
    expect((await send("PATCH", path, { status: "pending", title: task.title, result: null })).status).toBe(200);
    expect((await send("PATCH", path, { status: "succeeded" })).status).toBe(409);
    expect((await send("DELETE", `/agents/${agent.id}/tasks/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect(await recorded()).toEqual([]);
    expect((await send<TaskOut>("GET", path)).body).toEqual(task);
  });
});

// An event that cannot be stored fails its write: the change rolls back with it.
const refuseEvents = (type: string) =>
  testProvider === "postgresql"
    ? [
        `CREATE OR REPLACE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'event refused'; END $$`,
        `CREATE TRIGGER refuse_event BEFORE INSERT ON events FOR EACH ROW
         WHEN (NEW.type = '${type}') EXECUTE FUNCTION refuse_event()`,
      ]
    : [
        `CREATE TRIGGER refuse_event BEFORE INSERT ON events WHEN NEW.type = '${type}'
         BEGIN SELECT RAISE(ABORT, 'event refused'); END`,
      ];

/** Runs `write` while every event of `type` is refused by the database. */
async function withRefusedEvents<T>(type: string, write: () => Promise<T>): Promise<T> {
  for (const sql of refuseEvents(type)) await app.database.db.prisma.$executeRawUnsafe(sql);
  try {
    return await write();
  } finally {
    await app.database.db.prisma.$executeRawUnsafe(
      testProvider === "postgresql" ? "DROP TRIGGER refuse_event ON events" : "DROP TRIGGER refuse_event",
    );
  }
}

const internalError = { status: 500, body: { error: "internal_error", message: "An unexpected error occurred" } };
const rowsOf = statement<{ agents: number | bigint; pairs: number | bigint }, [name: string, value: string]>(
  "test_outbox_rows_of",
  `SELECT (SELECT COUNT(*) FROM agents WHERE name = $1) AS agents,
          (SELECT COUNT(*) FROM agent_metadata WHERE value = $2) AS pairs`,
);

describe("a change and its events commit together", () => {
  it("a write whose event cannot be stored answers 500 and changes nothing", async () => {
    const agent = await createAgent(app);
    mark = await eventLogHead(app.database.db);
    const res = await withRefusedEvents("agent.updated", () =>
      send("PATCH", `/agents/${agent.id}`, { status: "running" }),
    );
    expect(res).toEqual(internalError);
    expect((await send<AgentOut>("GET", `/agents/${agent.id}`)).body).toEqual(agent);
    expect(await recorded()).toEqual([]);
    expect((await send("PATCH", `/agents/${agent.id}`, { status: "running" })).status).toBe(200);
    expect((await recorded()).map((event) => event.type)).toEqual(["agent.updated"]);
  });

  it("a creation whose event cannot be stored answers 500 and writes neither the agent nor its metadata", async () => {
    const body = { name: "refused-creation", type: "worker", metadata: { outbox: "refused-creation" } };
    const res = await withRefusedEvents("agent.created", () => send("POST", "/agents", body));
    expect(res).toEqual(internalError);
    const counts = async () => {
      const row = await app.database.db.get(rowsOf, [body.name, body.metadata.outbox]);
      return { agents: Number(row?.agents), pairs: Number(row?.pairs) };
    };
    expect(await counts()).toEqual({ agents: 0, pairs: 0 });
    expect(await recorded()).toEqual([]);
    const agent = await createAgent(app, body);
    expect(await counts()).toEqual({ agents: 1, pairs: 1 });
    expect((await recorded()).map((event) => [event.type, event.data])).toEqual([["agent.created", { agent }]]);
    expect(await send<AgentOut[]>("GET", "/agents?metadata[outbox]=refused-creation")).toEqual({
      status: 200,
      body: [agent],
    });
  });

  it.runIf(testProvider === "postgresql")(
    "a creation's event is the first of its transaction, with an Idempotency-Key (inside one) or without (a statement on its own)",
    async () => {
      const alone = await createAgent(app, { metadata: { outbox: "alone" } });
      const keyed = await app.request("/agents", {
        method: "POST",
        json: { name: "agent", type: "worker" },
        headers: { "idempotency-key": `outbox-${Date.now()}` },
      });
      expect(keyed.status).toBe(201);
      const inTransaction = (await keyed.json()) as AgentOut;
      const events = await recorded();
      expect(events.map((event) => [event.type, event.data])).toEqual([
        ["agent.created", { agent: alone }],
        ["agent.created", { agent: inTransaction }],
      ]);
      for (const event of events) expect(event.id % BigInt(ordinalsPerTransaction)).toBe(1n);
    },
  );

  it("every event's id is larger than those recorded before it", async () => {
    const all = await readEvents(app.database.db, { projectId: defaultProjectId, limit: 1000 });
    expect(all.length).toBeGreaterThan(20);
    for (let i = 1; i < all.length; i++) expect(all[i]?.id).toBeGreaterThan(all[i - 1]?.id as bigint);
  });
});
