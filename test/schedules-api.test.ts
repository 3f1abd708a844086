import createClient from "openapi-fetch";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../generated/openapi.js";
import { fingerprintOf } from "../src/idempotency/key.js";
import { idempotencyStore } from "../src/idempotency/sql.js";
import type { ScheduleOut } from "../src/modules/schedules/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { bearer, createUser, tokenFor } from "./helpers/auth.js";
import { createAgent } from "./helpers/factories.js";
import { type OpenApiDocument, responseRecorder, sendRefusals } from "./helpers/openapi-responses.js";

// The schedules' operations (docs/api/schedules.md) through a client typed from the document, every
// response checked against it; then every documented status must have been seen.
let app: TestApp;
let document: OpenApiDocument;
let responses: ReturnType<typeof responseRecorder>;
let api: ReturnType<typeof createClient<paths>>;

beforeAll(async () => {
  app = await startTestApp({ BODY_LIMIT: "4kb" });
  document = (await (await app.request("/openapi.json")).json()) as OpenApiDocument;
  responses = responseRecorder(document);
  api = createClient<paths>({ baseUrl: app.baseUrl });
  api.use(responses.middleware);
});
afterAll(async () => {
  await app.close();
});
afterEach(() => {
  expect(responses.problems.splice(0)).toEqual([]);
});

const missingId = "5f0c6a8e-1d2b-4c3a-9e8f-7a6b5c4d3e2f";
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
type Body = Record<string, unknown>;

async function createSchedule(agentId: string, body: Body): Promise<ScheduleOut> {
  const created = await api.POST("/agents/{agent_id}/schedules", {
    params: { path: { agent_id: agentId } },
    body: body as never,
  });
  expect(created.response.status, JSON.stringify(created.error)).toBe(201);
  return created.data as ScheduleOut;
}

const schedulesCount = () => app.database.db.prisma.schedule.count();

describe("managing schedules", () => {
  it("creates, reads, lists, changes and deletes a schedule, with its events", async () => {
    const agent = await createAgent(app);
    const before = Date.now();
    const created = await api.POST("/agents/{agent_id}/schedules", {
      params: { path: { agent_id: agent.id } },
      body: {
        cron: "0 9 * * mon-fri",
        timezone: "Europe/Berlin",
        task: { title: "Morning report", priority: 7, input: { report: "daily" }, deadline_seconds: 600 },
        overlap: "skip",
      },
    });
    expect(created.response.status).toBe(201);
    const schedule = created.data as ScheduleOut;
    expect(created.response.headers.get("location")).toBe(`/agents/${agent.id}/schedules/${schedule.id}`);
    expect(schedule).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      agent_id: agent.id,
      cron: "0 9 * * mon-fri",
      every_seconds: null,
      timezone: "Europe/Berlin",
      task: {
        title: "Morning report",
        description: null,
        priority: 7,
        input: { report: "daily" },
        max_attempts: 1,
        metadata: {},
        deadline_seconds: 600,
        concurrency_key: null,
      },
      overlap: "skip",
      catch_up: "latest",
      paused: false,
      start_at: null,
      end_at: null,
      next_run_at: expect.any(String),
      last_run_at: null,
      last_task_id: null,
      created_at: expect.any(String),
      updated_at: schedule.created_at,
      version: 1,
    });
    // 09:00 in Berlin on a weekday: 07:00 or 08:00 UTC, within the next four days.
    const next = Date.parse(schedule.next_run_at as string);
    expect(next).toBeGreaterThan(before);
    expect(next - before).toBeLessThanOrEqual(4 * 86_400_000);
    expect(new Date(next).getUTCMinutes()).toBe(0);
    expect([7, 8]).toContain(new Date(next).getUTCHours());

    const path = { agent_id: agent.id, schedule_id: schedule.id };
    expect((await api.GET("/agents/{agent_id}/schedules/{schedule_id}", { params: { path } })).data).toEqual(schedule);
    const listed = await api.GET("/agents/{agent_id}/schedules", { params: { path: { agent_id: agent.id } } });
    expect(listed.data).toEqual([schedule]);

    const paused = await api.PATCH("/agents/{agent_id}/schedules/{schedule_id}", {
      params: { path },
      body: { paused: true },
    });
    expect(paused.response.status).toBe(200);
    expect(paused.data).toMatchObject({ paused: true, next_run_at: null, version: 2 });
    const resumed = await api.PATCH("/agents/{agent_id}/schedules/{schedule_id}", {
      params: { path },
      body: { paused: false },
    });
    expect(resumed.data).toMatchObject({ paused: false, next_run_at: schedule.next_run_at, version: 3 });
    // every_seconds replaces cron; the first run is one interval after the creation.
    const interval = await api.PATCH("/agents/{agent_id}/schedules/{schedule_id}", {
      params: { path },
      body: { every_seconds: 900 },
    });
    expect(interval.data).toMatchObject({ cron: null, every_seconds: 900, version: 4 });
    const nextRun = Date.parse(interval.data?.next_run_at as string);
    expect((nextRun - Date.parse(schedule.created_at)) % 900_000).toBe(0);
    expect(nextRun).toBeGreaterThan(Date.now() - 1_000);

    const deleted = await api.DELETE("/agents/{agent_id}/schedules/{schedule_id}", { params: { path } });
    expect(deleted.response.status).toBe(204);
    const gone = await api.GET("/agents/{agent_id}/schedules/{schedule_id}", { params: { path } });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toEqual({ detail: "Schedule not found" });

    const events = await app.database.db.prisma.event.findMany({
      where: { agentId: agent.id, type: { startsWith: "schedule." } },
      orderBy: { id: "asc" },
    });
    expect(events.map((event) => event.type)).toEqual([
      "schedule.created",
      "schedule.updated",
      "schedule.updated",
      "schedule.updated",
      "schedule.deleted",
    ]);
    expect(JSON.parse(events[1]?.data ?? "{}").changes).toEqual({
      paused: [false, true],
      next_run_at: [schedule.next_run_at, null],
    });
    const streamed = await app.request(`/events?types=schedule.*&agent_id=${agent.id}`);
    expect(((await streamed.json()) as { type: string }[]).map((event) => event.type)).toHaveLength(5);
  });

  it("an interval with a future start_at runs first at start_at; end_at before the next run leaves next_run_at null", async () => {
    const agent = await createAgent(app);
    const startAt = inAnHour();
    const schedule = await createSchedule(agent.id, { every_seconds: 60, start_at: startAt, task: { title: "t" } });
    expect(schedule.next_run_at).toBe(startAt);
    const ended = await createSchedule(agent.id, {
      every_seconds: 3600,
      end_at: new Date(Date.now() + 60_000).toISOString(),
      task: { title: "t" },
    });
    expect(ended.next_run_at).toBeNull();
    const cron = await createSchedule(agent.id, { cron: "*/5 * * * *", start_at: startAt, task: { title: "t" } });
    expect(Date.parse(cron.next_run_at as string)).toBeGreaterThanOrEqual(Date.parse(startAt));
    expect(Date.parse(cron.next_run_at as string) - Date.parse(startAt)).toBeLessThanOrEqual(300_000);
  });

  it("takes the edges of the date range: a run time past year 9999 is none", async () => {
    const agent = await createAgent(app);
    const last = await createSchedule(agent.id, {
      every_seconds: 31_536_000,
      start_at: "9999-12-31T23:59:59Z",
      task: { title: "t" },
    });
    expect(last.next_run_at).toBe("9999-12-31T23:59:59.000Z");
    const beyond = await createSchedule(agent.id, {
      cron: "0 0 1 1 *",
      timezone: "Pacific/Kiritimati",
      start_at: "9999-06-01T00:00:00Z",
      task: { title: "t" },
    });
    expect(beyond.next_run_at).toBeNull();
    const ancient = await createSchedule(agent.id, {
      cron: "* * * * *",
      start_at: "0001-01-01T00:00:00Z",
      end_at: "0001-01-02T00:00:00Z",
      task: { title: "t" },
    });
    expect(ancient.next_run_at).toBeNull();
  });

  it("lists an agent's schedules in pages, with a cursor", async () => {
    const agent = await createAgent(app);
    const made: ScheduleOut[] = [];
    for (let i = 0; i < 5; i++)
      made.push(await createSchedule(agent.id, { every_seconds: 600, task: { title: `s${i}` } }));
    const first = await api.GET("/agents/{agent_id}/schedules", {
      params: { path: { agent_id: agent.id }, query: { limit: 3 } },
    });
    expect(first.data?.map((s) => s.id)).toEqual(made.slice(0, 3).map((s) => s.id));
    const link = first.response.headers.get("link") ?? "";
    const after = /after=([^&>]+)/.exec(link)?.[1];
    expect(after).toBeDefined();
    const second = await api.GET("/agents/{agent_id}/schedules", {
      params: { path: { agent_id: agent.id }, query: { limit: 3, after: decodeURIComponent(after as string) } },
    });
    expect(second.data?.map((s) => s.id)).toEqual(made.slice(3).map((s) => s.id));
    expect(second.response.headers.get("link")).toBeNull();
  });

  it("answers an Idempotency-Key's retry with the same schedule, created once", async () => {
    const agent = await createAgent(app);
    const send = () =>
      api.POST("/agents/{agent_id}/schedules", {
        params: { path: { agent_id: agent.id } },
        body: { every_seconds: 600, task: { title: "once" } },
        headers: { "idempotency-key": `sched-${agent.id}` },
      });
    const first = await send();
    const second = await send();
    expect(second.response.status).toBe(201);
    expect(second.data).toEqual(first.data);
    expect(second.response.headers.get("idempotent-replayed")).toBe("true");
    expect(await app.database.db.prisma.schedule.count({ where: { agentId: agent.id } })).toBe(1);
  });
});

describe("refusals", () => {
  const invalid: [string, Body, string][] = [
    ["an invalid cron", { cron: "61 * * * *" }, "cron"],
    ["a cron of six fields", { cron: "0 0 9 * * *" }, "cron"],
    ["a cron nickname", { cron: "@daily" }, "cron"],
    ["a cron that never matches", { cron: "0 0 31 2 *" }, "cron"],
    ["an unknown time zone", { cron: "0 9 * * *", timezone: "Mars/Olympus_Mons" }, "timezone"],
    ["an offset for a time zone", { cron: "0 9 * * *", timezone: "+01:00" }, "timezone"],
    ["both cron and every_seconds", { cron: "0 9 * * *", every_seconds: 600 }, "cron"],
    ["neither cron nor every_seconds", {}, "cron"],
    ["every_seconds under 60", { every_seconds: 59 }, "every_seconds"],
    ["every_seconds over a year", { every_seconds: 31_536_001 }, "every_seconds"],
    ["every_seconds not an integer", { every_seconds: 60.5 }, "every_seconds"],
    [
      "end_at before start_at",
      { every_seconds: 600, start_at: "2027-01-02T00:00:00Z", end_at: "2027-01-01T00:00:00Z" },
      "end_at",
    ],
    ["a start_at that is no date-time", { every_seconds: 600, start_at: "tomorrow" }, "start_at"],
    ["an unknown overlap", { every_seconds: 600, overlap: "queue" }, "overlap"],
    ["an unknown catch_up", { every_seconds: 600, catch_up: "all" }, "catch_up"],
    ["paused not a boolean", { every_seconds: 600, paused: "yes" }, "paused"],
  ];
  for (const [what, body, field] of invalid) {
    it(`refuses ${what}: 400 naming ${field}, nothing created`, async () => {
      const agent = await createAgent(app);
      const count = await schedulesCount();
      const res = await api.POST("/agents/{agent_id}/schedules", {
        params: { path: { agent_id: agent.id } },
        body: { task: { title: "t" }, ...body } as never,
      });
      expect(res.response.status).toBe(400);
      const issues = (res.error as { details: { issues: { field: string }[] } }).details.issues;
      expect(issues.map((issue) => issue.field)).toContain(field);
      expect(await schedulesCount()).toBe(count);
    });
  }

  const badTasks: [string, unknown, string][] = [
    ["no task", undefined, "task"],
    ["an empty title", { title: "" }, "task.title"],
    ["a priority of 10", { title: "t", priority: 10 }, "task.priority"],
    ["max_attempts of 0", { title: "t", max_attempts: 0 }, "task.max_attempts"],
    ["deadline_seconds of 0", { title: "t", deadline_seconds: 0 }, "task.deadline_seconds"],
    ["deadline_seconds over a week", { title: "t", deadline_seconds: 604_801 }, "task.deadline_seconds"],
    ["input not an object", { title: "t", input: [1] }, "task.input"],
    ["an empty concurrency_key", { title: "t", concurrency_key: "" }, "task.concurrency_key"],
    ["a concurrency_key over 100 characters", { title: "t", concurrency_key: "k".repeat(101) }, "task.concurrency_key"],
    ["a concurrency_key not a string", { title: "t", concurrency_key: 42 }, "task.concurrency_key"],
  ];
  for (const [what, task, field] of badTasks) {
    it(`refuses a template with ${what}: 400 naming ${field}`, async () => {
      const agent = await createAgent(app);
      const res = await api.POST("/agents/{agent_id}/schedules", {
        params: { path: { agent_id: agent.id } },
        body: { every_seconds: 600, task } as never,
      });
      expect(res.response.status).toBe(400);
      const issues = (res.error as { details: { issues: { field: string }[] } }).details.issues;
      expect(issues.map((issue) => issue.field)).toContain(field);
    });
  }

  it("refuses a PATCH that breaks the rules against the stored schedule, or changes nothing, changing nothing", async () => {
    const agent = await createAgent(app);
    const schedule = await createSchedule(agent.id, {
      every_seconds: 600,
      start_at: "2030-01-02T00:00:00Z",
      task: { title: "t" },
    });
    const path = { agent_id: agent.id, schedule_id: schedule.id };
    const patch = (body: Body) =>
      api.PATCH("/agents/{agent_id}/schedules/{schedule_id}", { params: { path }, body: body as never });
    const cases: [Body, string][] = [
      [{ end_at: "2030-01-01T00:00:00Z" }, "end_at"],
      [{ cron: "0 9 * * *", every_seconds: 600 }, "cron"],
      [{ cron: "nonsense" }, "cron"],
      [{ timezone: "Nowhere/Town" }, "timezone"],
      [{ every_seconds: 10 }, "every_seconds"],
      [{ task: { title: "" } }, "task.title"],
      [{}, "body"],
    ];
    for (const [body, field] of cases) {
      const res = await patch(body);
      expect(res.response.status, JSON.stringify(body)).toBe(400);
      const issues = (res.error as { details: { issues: { field: string }[] } }).details.issues;
      expect(issues.map((issue) => issue.field)).toContain(field);
    }
    expect((await api.GET("/agents/{agent_id}/schedules/{schedule_id}", { params: { path } })).data).toEqual(schedule);
  });

  it("refuses a bad list query: 400 naming the parameter", async () => {
    const agent = await createAgent(app);
    for (const [query, field] of [
      [{ limit: 0 }, "limit"],
      [{ after: "not-a-cursor" }, "after"],
    ] as const) {
      const res = await api.GET("/agents/{agent_id}/schedules", { params: { path: { agent_id: agent.id }, query } });
      expect(res.response.status).toBe(400);
      const issues = (res.error as { details: { issues: { field: string }[] } }).details.issues;
      expect(issues.map((issue) => issue.field)).toContain(field);
    }
  });

  it("refuses bodies too large (413), not JSON (415) or malformed (400), changing nothing", async () => {
    const agent = await createAgent(app);
    const schedule = await createSchedule(agent.id, { every_seconds: 600, task: { title: "t" } });
    const path = { agent_id: agent.id, schedule_id: schedule.id };
    const big = "x".repeat(5000);
    const asText = { bodySerializer: () => "x", headers: { "content-type": "text/plain" } };
    const create = (body: Body, init = {}) =>
      api.POST("/agents/{agent_id}/schedules", {
        params: { path: { agent_id: agent.id } },
        body: body as never,
        ...init,
      });
    expect((await create({ every_seconds: 600, task: { title: big } })).response.status).toBe(413);
    expect((await create({ every_seconds: 600, task: { title: "t" } }, asText)).response.status).toBe(415);
    const patch = (body: Body, init = {}) =>
      api.PATCH("/agents/{agent_id}/schedules/{schedule_id}", { params: { path }, body: body as never, ...init });
    expect((await patch({ task: { title: big } })).response.status).toBe(413);
    expect((await patch({ paused: true }, asText)).response.status).toBe(415);
    const run = (body: string, contentType: string) =>
      api.POST("/agents/{agent_id}/schedules/{schedule_id}/runs", {
        params: { path },
        body: {} as never,
        bodySerializer: () => body,
        headers: { "content-type": contentType },
      });
    expect((await run("{", "application/json")).response.status).toBe(400);
    expect((await run(`{"x":"${big}"}`, "application/json")).response.status).toBe(413);
    expect((await run("x", "text/plain")).response.status).toBe(415);
    expect(await app.database.db.prisma.schedule.count({ where: { agentId: agent.id } })).toBe(1);
    expect(await app.database.db.prisma.task.count({ where: { agentId: agent.id } })).toBe(0);
  });

  it("takes Idempotency-Key on its creating POSTs: replay, 409 while the first runs, 422 for another request", async () => {
    const agent = await createAgent(app);
    const sender = `${defaultProjectId} address:127.0.0.1`;
    const claimRunning = (key: string, procedure: string, input: object) =>
      idempotencyStore.claim(
        app.database.db,
        { sender, key, fingerprint: fingerprintOf(procedure, input, sender) },
        60_000,
      );
    const header = (key: string) => ({ "Idempotency-Key": key });
    const body = { every_seconds: 600, task: { title: "keyed" } };
    const create = (key: string, title = "keyed") =>
      api.POST("/agents/{agent_id}/schedules", {
        params: { path: { agent_id: agent.id }, header: header(key) },
        body: { ...body, task: { title } },
      });
    const first = await create("schedules-create");
    expect(first.response.status).toBe(201);
    expect((await create("schedules-create", "other")).response.status).toBe(422);
    await claimRunning("schedules-create-running", "schedules.create", { agent_id: agent.id, ...body });
    expect((await create("schedules-create-running")).response.status).toBe(409);

    const one = { agent_id: agent.id, schedule_id: first.data?.id ?? "" };
    const other = { agent_id: agent.id, schedule_id: (await create("schedules-create-other")).data?.id ?? "" };
    const run = (key: string, path: typeof one) =>
      api.POST("/agents/{agent_id}/schedules/{schedule_id}/runs", { params: { path, header: header(key) } });
    expect((await run("schedules-run", one)).response.status).toBe(201);
    expect((await run("schedules-run", other)).response.status).toBe(422);
    await claimRunning("schedules-run-running", "schedules.run", one);
    expect((await run("schedules-run-running", one)).response.status).toBe(409);
    expect(await app.database.db.prisma.task.count({ where: { agentId: agent.id } })).toBe(1);
  });

  it("404 for a missing agent or schedule, and for another project's: the same answer", async () => {
    const agent = await createAgent(app);
    const schedule = await createSchedule(agent.id, { every_seconds: 600, task: { title: "t" } });
    const user = await createUser(app);
    const auth = bearer(await tokenFor(app, user));
    const project = await app.request("/projects", { method: "POST", headers: auth, json: { name: "other" } });
    expect(project.status).toBe(201);
    const other = { ...auth, "x-project-id": ((await project.json()) as { id: string }).id };
    const theirs = await app.request("/agents", { method: "POST", headers: other, json: { name: "a", type: "t" } });
    const theirAgent = (await theirs.json()) as { id: string };
    const theirSchedule = (await (
      await app.request(`/agents/${theirAgent.id}/schedules`, {
        method: "POST",
        headers: other,
        json: { every_seconds: 600, task: { title: "theirs" } },
      })
    ).json()) as ScheduleOut;

    const paths: [string, string][] = [
      [`/agents/${missingId}/schedules/${schedule.id}`, "Agent not found"],
      [`/agents/${theirAgent.id}/schedules/${theirSchedule.id}`, "Agent not found"],
      [`/agents/${agent.id}/schedules/${missingId}`, "Schedule not found"],
      [`/agents/${agent.id}/schedules/${theirSchedule.id}`, "Schedule not found"],
      [`/agents/${agent.id}/schedules/not-an-id`, "Schedule not found"],
    ];
    for (const [path, detail] of paths) {
      for (const [method, json] of [
        ["GET", undefined],
        ["PATCH", { paused: true }],
        ["DELETE", undefined],
      ] as const) {
        const res = await app.request(path, { method, json });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await res.json()).toEqual({ detail });
      }
      const run = await app.request(`${path}/runs`, { method: "POST" });
      expect(run.status).toBe(404);
      expect(await run.json()).toEqual({ detail });
    }
    for (const agentId of [missingId, theirAgent.id]) {
      const listed = await api.GET("/agents/{agent_id}/schedules", { params: { path: { agent_id: agentId } } });
      expect(listed.response.status).toBe(404);
      const created = await api.POST("/agents/{agent_id}/schedules", {
        params: { path: { agent_id: agentId } },
        body: { every_seconds: 600, task: { title: "t" } },
      });
      expect(created.response.status).toBe(404);
      expect(created.error).toEqual({ detail: "Agent not found" });
    }
    // Theirs is untouched and still theirs.
    const still = await app.request(`/agents/${theirAgent.id}/schedules/${theirSchedule.id}`, { headers: other });
    expect(await still.json()).toEqual(theirSchedule);
  });
});

describe("run now, and the agent", () => {
  it("a run now creates a task from the template, next_run_at unchanged; task.created carries the schedule", async () => {
    const agent = await createAgent(app);
    const schedule = await createSchedule(agent.id, {
      every_seconds: 3600,
      task: { title: "Sync", description: "d", priority: 3, input: { a: 1 }, max_attempts: 2, metadata: { k: "v" } },
    });
    const path = { agent_id: agent.id, schedule_id: schedule.id };
    const ran = await api.POST("/agents/{agent_id}/schedules/{schedule_id}/runs", {
      params: { path },
      headers: { "idempotency-key": `run-${schedule.id}` },
    });
    expect(ran.response.status).toBe(201);
    const task = ran.data as TaskOut;
    expect(ran.response.headers.get("location")).toBe(`/agents/${agent.id}/tasks/${task.id}`);
    expect(task).toMatchObject({
      title: "Sync",
      description: "d",
      priority: 3,
      input: { a: 1 },
      max_attempts: 2,
      metadata: { k: "v" },
      status: "pending",
      deadline_at: null,
      schedule_id: schedule.id,
      scheduled_for: null,
    });
    const again = await api.POST("/agents/{agent_id}/schedules/{schedule_id}/runs", {
      params: { path },
      headers: { "idempotency-key": `run-${schedule.id}` },
    });
    expect(again.data).toEqual(task);
    const after = (await api.GET("/agents/{agent_id}/schedules/{schedule_id}", { params: { path } })).data;
    expect(after).toMatchObject({ next_run_at: schedule.next_run_at, last_task_id: task.id, version: 1 });
    const fetched = await app.request(`/agents/${agent.id}/tasks/${task.id}`);
    expect(await fetched.json()).toEqual(task);
    const [event] = await app.database.db.prisma.event.findMany({ where: { taskId: task.id } });
    expect(event?.type).toBe("task.created");
    expect(JSON.parse(event?.data ?? "{}").task).toMatchObject({ schedule_id: schedule.id, scheduled_for: null });
    // Deleting the schedule keeps its tasks.
    await api.DELETE("/agents/{agent_id}/schedules/{schedule_id}", { params: { path } });
    expect((await app.request(`/agents/${agent.id}/tasks/${task.id}`)).status).toBe(200);
  });

  it("the template's concurrency_key round-trips, and each task it creates carries it", async () => {
    const agent = await createAgent(app);
    const schedule = await createSchedule(agent.id, {
      every_seconds: 3600,
      task: { title: "Export", concurrency_key: "acme" },
    });
    expect(schedule.task).toEqual({
      title: "Export",
      description: null,
      priority: 5,
      input: null,
      max_attempts: 1,
      metadata: {},
      deadline_seconds: null,
      concurrency_key: "acme",
    });
    const path = { agent_id: agent.id, schedule_id: schedule.id };
    expect((await api.GET("/agents/{agent_id}/schedules/{schedule_id}", { params: { path } })).data).toEqual(schedule);
    const listed = await api.GET("/agents/{agent_id}/schedules", { params: { path: { agent_id: agent.id } } });
    expect(listed.data).toEqual([schedule]);
    const ran = await api.POST("/agents/{agent_id}/schedules/{schedule_id}/runs", { params: { path } });
    expect(ran.response.status).toBe(201);
    expect(ran.data).toMatchObject({ title: "Export", concurrency_key: "acme", schedule_id: schedule.id });
    const byKey = await app.request(`/agents/${agent.id}/tasks?concurrency_key=acme`);
    expect(((await byKey.json()) as TaskOut[]).map((task) => task.id)).toEqual([(ran.data as TaskOut).id]);

    // A template given again without the key has none: the template is replaced whole.
    const patched = await api.PATCH("/agents/{agent_id}/schedules/{schedule_id}", {
      params: { path },
      body: { task: { title: "Export" } },
    });
    expect(patched.response.status).toBe(200);
    expect(patched.data).toMatchObject({ task: { concurrency_key: null }, version: 2 });
    const keyless = await api.POST("/agents/{agent_id}/schedules/{schedule_id}/runs", { params: { path } });
    expect(keyless.data).toMatchObject({ concurrency_key: null });
  });

  it("a template stored before concurrency_key was one reads with it null, and its tasks have none", async () => {
    const agent = await createAgent(app);
    const schedule = await createSchedule(agent.id, { every_seconds: 3600, task: { title: "Old" } });
    const { concurrency_key: _, ...stored } = schedule.task;
    await app.database.db.prisma.schedule.update({
      where: { id: schedule.id },
      data: { task: JSON.stringify(stored) },
    });
    const path = { agent_id: agent.id, schedule_id: schedule.id };
    expect((await api.GET("/agents/{agent_id}/schedules/{schedule_id}", { params: { path } })).data).toEqual(schedule);
    const ran = await api.POST("/agents/{agent_id}/schedules/{schedule_id}/runs", { params: { path } });
    expect(ran.response.status).toBe(201);
    expect(ran.data).toMatchObject({ title: "Old", concurrency_key: null });
  });

  it("a stopped agent's schedule stays, and a run now is 409", async () => {
    const agent = await createAgent(app);
    const schedule = await createSchedule(agent.id, { every_seconds: 600, task: { title: "t" } });
    expect((await app.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "stopped" } })).status).toBe(
      200,
    );
    const path = { agent_id: agent.id, schedule_id: schedule.id };
    const ran = await api.POST("/agents/{agent_id}/schedules/{schedule_id}/runs", { params: { path } });
    expect(ran.response.status).toBe(409);
    expect((await api.GET("/agents/{agent_id}/schedules/{schedule_id}", { params: { path } })).data).toEqual(schedule);
  });

  it("deleting the agent deletes its schedules, each with its schedule.deleted event", async () => {
    const agent = await createAgent(app);
    const schedules = [
      await createSchedule(agent.id, { every_seconds: 600, task: { title: "a" } }),
      await createSchedule(agent.id, { cron: "0 * * * *", task: { title: "b" } }),
    ];
    expect((await app.request(`/agents/${agent.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await app.database.db.prisma.schedule.count({ where: { agentId: agent.id } })).toBe(0);
    const events = await app.database.db.prisma.event.findMany({
      where: { agentId: agent.id, type: "schedule.deleted" },
      orderBy: { id: "asc" },
    });
    expect(events.map((event) => JSON.parse(event.data).schedule.id)).toEqual(schedules.map((s) => s.id));
  });
});

describe("the document", () => {
  it("refuses a bad token (401), a bad key (403) and a project the caller cannot act in (404)", async () => {
    await sendRefusals(app.baseUrl, document, responses, /\/schedules/);
  });

  it("saw every documented status of every schedule operation but 405, 500 and 503", () => {
    const documented = Object.entries(document.paths)
      .filter(([path]) => path.includes("/schedules"))
      .flatMap(([path, item]) =>
        Object.entries(item).flatMap(([method, { responses }]) =>
          Object.keys(responses)
            .filter((status) => !["405", "500", "503"].includes(status))
            .map((status) => `${method.toUpperCase()} ${path} ${status}`),
        ),
      );
    expect(documented.length).toBeGreaterThan(10);
    const seen = new Set(responses.observed.map(({ method, path, status }) => `${method} ${path} ${status}`));
    expect(documented.filter((response) => !seen.has(response))).toEqual([]);
  });
});
