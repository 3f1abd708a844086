import { createTRPCClient, httpLink } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { AppRouter } from "../src/modules/index.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const missingId = "00000000-0000-4000-8000-000000000000";
const agentNotFound = { detail: "Agent not found" };
const taskNotFound = { detail: "Task not found" };

const read = async <T = TaskOut>(res: Response) => (await res.json()) as T;
const post = (agentId: string, json: unknown) => app.request(`/agents/${agentId}/tasks`, { method: "POST", json });
const patch = (path: string, json: unknown) => app.request(path, { method: "PATCH", json });

describe("POST /agents/{agent_id}/tasks", () => {
  it("creates a pending task with the defaults: 201, Location, the Task body", async () => {
    const agent = await createAgent(app);
    // status and result are not fields of a new task: ignored like any unknown field.
    const res = await post(agent.id, { title: "Summarise", status: "running", result: 1, extra: true });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const task = await read(res);
    expect(res.headers.get("location")).toBe(`/agents/${agent.id}/tasks/${task.id}`);
    expect(task).toEqual({
      id: expect.stringMatching(uuid),
      agent_id: agent.id,
      title: "Summarise",
      description: null,
      priority: 5,
      status: "pending",
      input: null,
      result: null,
      created_at: expect.stringMatching(iso),
      updated_at: task.created_at,
      max_attempts: 1,
      attempts: 0,
      run_at: task.created_at,
      deadline_at: null,
      lease: null,
      cancel_requested: false,
      error: null,
      version: 1,
      metadata: {},
      schedule_id: null,
      scheduled_for: null,
    });
    expect(await read(await app.request(`/agents/${agent.id}/tasks/${task.id}`))).toEqual(task);
  });

  it("stores every field it is given", async () => {
    const agent = await createAgent(app);
    const body = { title: "Crawl", description: "The whole site", priority: 9, input: { url: "https://example.com" } };
    const task = await read(await post(agent.id, body));
    expect(task).toMatchObject({ ...body, status: "pending", result: null });
  });

  it("is 404 for a missing agent, including an id that is not a UUID", async () => {
    for (const id of [missingId, "not-a-uuid"]) {
      const res = await post(id, { title: "t" });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(agentNotFound);
    }
  });

  it("is 409 on a stopped agent, whose existing tasks stay readable and changeable", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    for (const status of ["running", "stopped"]) {
      expect((await patch(`/agents/${agent.id}`, { status })).status).toBe(200);
    }
    const res = await post(agent.id, { title: "one more" });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: "conflict",
      message: "Agent is stopped and accepts no new tasks",
      details: { agent_status: "stopped" },
    });
    expect(await read<TaskOut[]>(await app.request(`/agents/${agent.id}/tasks`))).toEqual([task]);
    expect((await read(await patch(path, { status: "cancelled" }))).status).toBe("cancelled");

    expect((await patch(`/agents/${agent.id}`, { status: "idle" })).status).toBe(200);
    expect((await post(agent.id, { title: "one more" })).status).toBe(201);
  });
});

describe("GET /agents/{agent_id}/tasks", () => {
  let agent: AgentOut;
  let tasks: TaskOut[];
  beforeAll(async () => {
    agent = await createAgent(app);
    await createTask(app, (await createAgent(app)).id, { title: "someone else's" });
    tasks = [];
    for (let i = 0; i < 5; i++) tasks.push(await createTask(app, agent.id, { title: `task ${i}` }));
    for (const task of [tasks[1], tasks[3]]) {
      await patch(`/agents/${agent.id}/tasks/${task?.id}`, { status: "running" });
    }
  });
  const list = async (query = "") => {
    const res = await app.request(`/agents/${agent.id}/tasks${query}`);
    expect(res.status).toBe(200);
    return (await read<TaskOut[]>(res)).map((t) => t.title);
  };

  it("lists only this agent's tasks, by created_at then id", async () => {
    const ordered = [...tasks].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    expect(await list()).toEqual(ordered.map((t) => t.title));
  });

  it("pages with skip and limit, and filters by status", async () => {
    const all = await list();
    expect(await list("?skip=1&limit=2")).toEqual(all.slice(1, 3));
    expect(await list("?skip=5")).toEqual([]);
    expect(await list("?status=running")).toEqual(all.filter((t) => ["task 1", "task 3"].includes(t)));
    expect(await list("?status=succeeded")).toEqual([]);
  });

  it("is 400 for out-of-range, non-integer or unknown values", async () => {
    for (const query of [
      "limit=0",
      "limit=1001",
      "skip=-1",
      "limit=1.5",
      "skip=abc",
      "status=done",
      "status=Pending",
    ]) {
      const res = await app.request(`/agents/${agent.id}/tasks?${query}`);
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("validation_error");
    }
  });

  it("is 404 for a missing agent", async () => {
    for (const id of [missingId, "nope"]) {
      const res = await app.request(`/agents/${id}/tasks`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(agentNotFound);
    }
  });
});

describe("one task: GET, PATCH, DELETE", () => {
  let agent: AgentOut;
  let other: AgentOut;
  beforeAll(async () => {
    agent = await createAgent(app);
    other = await createAgent(app);
  });

  it("PATCH changes only the fields given and moves updated_at", async () => {
    const task = await createTask(app, agent.id, { description: "first" });
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    const changes = { title: "renamed", description: null, priority: 0, result: { partial: [1, 2] } };
    const res = await patch(path, changes);
    expect(res.status).toBe(200);
    const body = await read(res);
    expect(body).toEqual({ ...task, ...changes, updated_at: expect.stringMatching(iso), version: task.version + 1 });
    expect(body.updated_at > task.updated_at).toBe(true);
    expect(await read(await app.request(path))).toEqual(body);
  });

  it("PATCH with the stored values writes nothing", async () => {
    const task = await createTask(app, agent.id, { description: "same", priority: 3 });
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    const res = await patch(path, {
      title: task.title,
      description: "same",
      priority: 3,
      status: "pending",
      result: null,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(task);
  });

  it("PATCH without a known field is 400", async () => {
    // docs/api/tasks.md, docs/api/leases.md, docs/http.md: the task fields, the scheduling fields, a worker's lease_id, and metadata.
    const knownFields =
      "title, description, priority, status, result, max_attempts, run_at, deadline_at, lease_id, metadata";
    const task = await createTask(app, agent.id);
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    // input is set at creation only: it counts as unknown here.
    for (const body of [{}, { input: { a: 1 } }, { agent_id: other.id }]) {
      const res = await patch(path, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: "validation_error",
        message: `Request validation failed: body: must contain at least one of: ${knownFields}`,
        details: { issues: [{ field: "body", message: `must contain at least one of: ${knownFields}` }] },
      });
    }
    expect(await read(await app.request(path))).toEqual(task);
  });

  it("PATCH with invalid values is 400 naming the field", async () => {
    const task = await createTask(app, agent.id);
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    const cases: [Record<string, unknown>, string][] = [
      [{ title: "" }, "title"],
      [{ title: null }, "title"],
      [{ priority: 10 }, "priority"],
      [{ priority: null }, "priority"],
      [{ priority: "5" }, "priority"],
      [{ priority: true }, "priority"],
      [{ priority: 1.5 }, "priority"],
      [{ status: "done" }, "status"],
      [{ status: null }, "status"],
      [{ description: 5 }, "description"],
    ];
    for (const [body, field] of cases) {
      const res = await patch(path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const error = (await res.json()) as { details: { issues: { field: string }[] } };
      expect(error.details.issues.map((i) => i.field)).toEqual([field]);
    }
  });

  it("a task is not found under another agent's path, and is left alone there", async () => {
    const task = await createTask(app, agent.id);
    const foreign = `/agents/${other.id}/tasks/${task.id}`;
    for (const [method, json] of [["GET"], ["PATCH", { status: "running" }], ["DELETE"]] as const) {
      const res = await app.request(foreign, { method, json });
      expect(res.status, method).toBe(404);
      expect(await res.json()).toEqual(taskNotFound);
    }
    expect(await read(await app.request(`/agents/${agent.id}/tasks/${task.id}`))).toEqual(task);
  });

  it("a missing task is 'Task not found', a missing agent 'Agent not found'", async () => {
    const task = await createTask(app, agent.id);
    const cases = [
      [`/agents/${agent.id}/tasks/${missingId}`, taskNotFound],
      [`/agents/${agent.id}/tasks/not-a-uuid`, taskNotFound],
      [`/agents/${missingId}/tasks/${task.id}`, agentNotFound],
      [`/agents/not-a-uuid/tasks/${task.id}`, agentNotFound],
    ] as const;
    for (const [path, detail] of cases) {
      for (const [method, json] of [["GET"], ["PATCH", { title: "x" }], ["DELETE"]] as const) {
        const res = await app.request(path, { method, json });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await res.json()).toEqual(detail);
      }
    }
  });

  it("DELETE is 204 with no body, then 404", async () => {
    const task = await createTask(app, agent.id);
    const path = `/agents/${agent.id}/tasks/${task.id}`;
    const res = await app.request(path, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(res.headers.get("content-type")).toBeNull();
    expect(await res.text()).toBe("");
    expect((await app.request(path)).status).toBe(404);
    const again = await app.request(path, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual(taskNotFound);
  });
});

describe("DELETE /agents/{agent_id}", () => {
  it("deletes the agent's tasks with it and nobody else's", async () => {
    const [doomed, survivor] = [await createAgent(app), await createAgent(app)];
    for (let i = 0; i < 3; i++) await createTask(app, doomed.id);
    const kept = await createTask(app, survivor.id);

    expect((await app.request(`/agents/${doomed.id}`, { method: "DELETE" })).status).toBe(204);

    const { db } = app.database;
    expect(await db.prisma.task.count({ where: { agentId: doomed.id } })).toBe(0);
    const orphans = await db.prisma.$queryRaw<{ n: number | bigint }[]>`
      SELECT COUNT(*) AS n FROM tasks WHERE agent_id NOT IN (SELECT id FROM agents)`;
    expect(Number(orphans[0]?.n)).toBe(0);
    expect(await read(await app.request(`/agents/${survivor.id}/tasks/${kept.id}`))).toEqual(kept);
    expect((await app.request(`/agents/${doomed.id}/tasks`)).status).toBe(404);
  });
});

describe("the same procedures over /trpc", () => {
  it("serves typed inputs, outputs and errors", async () => {
    const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc` })] });
    const agent = await client.agents.create.mutate({ name: "typed", type: "worker" });
    const running = await client.agents.update.mutate({ agent_id: agent.id, status: "running" });
    expect(running.status).toBe("running");

    const task = await client.tasks.create.mutate({ agent_id: agent.id, title: "typed task", input: { n: 1 } });
    expect(task).toMatchObject({ agent_id: agent.id, status: "pending", priority: 5, input: { n: 1 }, result: null });
    const done = await client.tasks.update.mutate({
      agent_id: agent.id,
      task_id: task.id,
      status: "running",
      result: { ok: true },
    });
    expect(done).toMatchObject({ status: "running", result: { ok: true } });
    expect(await client.tasks.get.query({ agent_id: agent.id, task_id: task.id })).toEqual(done);
    expect((await client.tasks.list.query({ agent_id: agent.id, status: "running" })).items).toEqual([done]);

    await expect(
      client.tasks.update.mutate({ agent_id: agent.id, task_id: task.id, status: "pending" }),
    ).rejects.toMatchObject({
      message: "Cannot change status from running to pending",
      data: {
        code: "CONFLICT",
        httpStatus: 409,
        error: "conflict",
        details: { from: "running", to: "pending", allowed: ["succeeded", "failed", "cancelled"] },
      },
    });
    await expect(client.agents.update.mutate({ agent_id: agent.id })).rejects.toMatchObject({
      data: { code: "BAD_REQUEST", httpStatus: 400 },
    });

    await client.tasks.remove.mutate({ agent_id: agent.id, task_id: task.id });
    await expect(client.tasks.get.query({ agent_id: agent.id, task_id: task.id })).rejects.toMatchObject({
      message: "Task not found",
      data: { code: "NOT_FOUND", httpStatus: 404 },
    });
  });
});

describe("the OpenAPI document", () => {
  it("lists every new operation with its real statuses", async () => {
    const document = (await (await app.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, { headers?: object }> }>>;
    };
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
    const statuses = (operationId: string) => {
      const operation = operations.find((o) => o.operationId === operationId);
      return Object.keys(operation?.responses ?? {});
    };
    const expected: Record<string, string[]> = {
      updateAgent: ["200", "400", "404", "409"],
      listTasks: ["200", "400", "404"],
      createTask: ["201", "400", "404", "409"],
      getTask: ["200", "404"],
      // 202: a leased task's cancellation, asked of its worker (docs/api/leases.md).
      updateTask: ["200", "202", "400", "404", "409"],
      deleteTask: ["204", "404"],
    };
    for (const [operationId, codes] of Object.entries(expected)) {
      const documented = statuses(operationId);
      expect(documented, operationId).toEqual(expect.arrayContaining(codes));
      expect(
        documented.filter((s) => s.startsWith("2")),
        operationId,
      ).toEqual(codes.filter((s) => s.startsWith("2")));
      expect(documented.includes("409"), operationId).toBe(codes.includes("409"));
    }
    const created = document.paths["/agents/{agent_id}/tasks"]?.post?.responses["201"];
    expect(created?.headers).toHaveProperty("Location");
  });
});
