import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LeaseOut } from "../src/modules/leases/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTask } from "./helpers/factories.js";
import { eventLog, getTask, leasePath, runningAgent, send, takeLease, taskPath } from "./helpers/leases.js";

// docs/api/leases.md: a worker finishes its task through its lease; docs/api/tasks.md: the fields that schedule a task.
let app: TestApp;
beforeAll(async () => {
  // Short retries: 250 ms after the first failed attempt, 500 ms after the second, then at most 800 ms.
  app = await startTestApp({ TASK_RETRY_BASE_SECONDS: "0.25", TASK_RETRY_MAX_SECONDS: "0.8" });
});
afterAll(() => app.close());

const plus = (time: string, ms: number) => new Date(Date.parse(time) + ms).toISOString();
const failure = { code: "upstream_timeout", message: "The crawler timed out", details: { after_ms: 30000 } };
const required = {
  error: "conflict",
  message: "The task is leased: only its worker changes its status, with its lease_id",
  details: { lease: "required" },
};
const lost = {
  error: "conflict",
  message: "This lease is no longer the task's: it expired, was released, or the task ended or was leased again",
  details: { lease: "lost" },
};

/** A running agent with one task, leased. */
async function leased(taskBody: Record<string, unknown> = {}) {
  const agent = await runningAgent(app);
  const task = await createTask(app, agent.id, taskBody);
  const lease = await takeLease(app, agent.id, { worker: "w" });
  expect(lease.task_id).toBe(task.id);
  return { agent, task, lease, events: await eventLog(app, agent.id) };
}

const finish = (lease: LeaseOut, body: Record<string, unknown>) =>
  send<TaskOut>(app, "PATCH", taskPath(lease.task), { lease_id: lease.id, ...body });

describe("finishing through the lease", () => {
  it("succeeded with a result: 200, the lease gone, one task.succeeded event", async () => {
    const { agent, lease, events } = await leased();
    const answer = await finish(lease, { status: "succeeded", result: { pages: 42 } });
    expect(answer.status).toBe(200);
    const done = answer.body;
    expect(done).toEqual({
      ...lease.task,
      status: "succeeded",
      result: { pages: 42 },
      lease: null,
      updated_at: done.updated_at,
      version: 3,
    });
    expect(await events()).toEqual([
      {
        type: "task.succeeded",
        occurred_at: done.updated_at,
        task_id: done.id,
        data: {
          task: done,
          changes: { status: ["running", "succeeded"], result: [null, { pages: 42 }], lease: [lease.task.lease, null] },
        },
      },
    ]);
    expect((await send(app, "GET", leasePath(agent.id, lease.id))).status).toBe(404);
  });

  it("failed with attempts left: back to pending after the retry delay, with the error; task.retry_scheduled", async () => {
    const { agent, lease, events } = await leased({ max_attempts: 3 });
    const answer = await finish(lease, { status: "failed", error: failure });
    expect(answer.status).toBe(200);
    const retried = answer.body;
    expect(retried).toEqual({
      ...lease.task,
      status: "pending",
      attempts: 1,
      error: failure,
      run_at: plus(retried.updated_at, 250),
      lease: null,
      updated_at: retried.updated_at,
      version: 3,
    });
    expect(await events()).toEqual([
      {
        type: "task.retry_scheduled",
        occurred_at: retried.updated_at,
        task_id: retried.id,
        data: {
          task: retried,
          changes: {
            status: ["running", "pending"],
            attempts: [0, 1],
            run_at: [lease.task.run_at, retried.run_at],
            lease: [lease.task.lease, null],
            error: [null, failure],
          },
        },
      },
    ]);
    // Not leasable before run_at; a worker waiting is answered when it comes.
    const waited = await send<LeaseOut>(app, "POST", leasePath(agent.id), { wait_seconds: 10 });
    expect(waited.status).toBe(201);
    expect(waited.body.task_id).toBe(retried.id);
    expect(Date.parse(waited.body.created_at)).toBeGreaterThanOrEqual(Date.parse(retried.run_at));
    // The second failure waits twice as long.
    const second = await finish(waited.body, { status: "failed", error: failure });
    expect(second.body).toMatchObject({ status: "pending", attempts: 2, run_at: plus(second.body.updated_at, 500) });
    const third = await send<LeaseOut>(app, "POST", leasePath(agent.id), { wait_seconds: 10 });
    const last = await finish(third.body, { status: "failed", error: { code: "again", message: "Still failing" } });
    expect(last.body).toMatchObject({
      status: "failed",
      attempts: 3,
      error: { code: "again", message: "Still failing", details: null },
      lease: null,
      run_at: second.body.run_at,
    });
  });

  it("the delay doubles up to TASK_RETRY_MAX_SECONDS", async () => {
    const { agent, lease } = await leased({ max_attempts: 5 });
    const delays: number[] = [];
    let current = lease;
    for (let attempt = 1; attempt <= 4; attempt++) {
      const retried = (await finish(current, { status: "failed" })).body;
      delays.push(Date.parse(retried.run_at) - Date.parse(retried.updated_at));
      if (attempt < 4) current = (await send<LeaseOut>(app, "POST", leasePath(agent.id), { wait_seconds: 10 })).body;
    }
    expect(delays).toEqual([250, 500, 800, 800]);
  });

  it("failed with retry: false, or without attempts left, is failed; without an error, a generic one", async () => {
    const first = await leased({ max_attempts: 3 });
    const noRetry = await finish(first.lease, { status: "failed", error: failure, retry: false });
    expect(noRetry.body).toEqual({
      ...first.lease.task,
      status: "failed",
      attempts: 1,
      error: failure,
      lease: null,
      updated_at: noRetry.body.updated_at,
      version: 3,
    });
    expect(await first.events()).toEqual([
      {
        type: "task.failed",
        occurred_at: noRetry.body.updated_at,
        task_id: noRetry.body.id,
        data: {
          task: noRetry.body,
          changes: {
            status: ["running", "failed"],
            attempts: [0, 1],
            lease: [first.lease.task.lease, null],
            error: [null, failure],
          },
        },
      },
    ]);

    const second = await leased();
    const once = await finish(second.lease, { status: "failed", retry: true });
    expect(once.body).toMatchObject({
      status: "failed",
      attempts: 1,
      error: { code: "failed", message: "The worker reported a failure", details: null },
    });
  });

  it("cancelled by the worker itself", async () => {
    const { lease } = await leased();
    const answer = await finish(lease, { status: "cancelled" });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: "cancelled", lease: null, attempts: 0, cancel_requested: false });
  });

  it("the lease holder may change other fields, or nothing: the task stays leased", async () => {
    const { lease } = await leased();
    const answer = await finish(lease, { result: { progress: 0.5 } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: "running", result: { progress: 0.5 }, lease: lease.task.lease });
    const same = await finish(lease, { status: "running" });
    expect(same.body).toEqual(answer.body);
  });
});

describe("a leased task's status is its worker's", () => {
  it("without lease_id: 409 lease required, and nothing changes", async () => {
    const { lease, events } = await leased();
    for (const status of ["succeeded", "failed", "pending"]) {
      const answer = await send(app, "PATCH", taskPath(lease.task), { status, title: "changed" });
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual(required);
    }
    expect(await getTask(app, lease.task)).toEqual(lease.task);
    expect(await events()).toEqual([]);
  });

  it("anyone may change its other fields", async () => {
    const { lease } = await leased();
    const answer = await send<TaskOut>(app, "PATCH", taskPath(lease.task), {
      title: "renamed",
      priority: 1,
      description: "d",
      result: [1],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ title: "renamed", status: "running", lease: lease.task.lease, version: 3 });
  });

  it("a stale lease_id after the task was leased again: 409 lease lost", async () => {
    const { agent, lease } = await leased();
    expect((await send(app, "DELETE", leasePath(agent.id, lease.id))).status).toBe(204);
    const again = await takeLease(app, agent.id);
    expect(again.task_id).toBe(lease.task_id);
    const events = await eventLog(app, agent.id);
    for (const body of [{ status: "succeeded" }, { status: "failed" }, { status: "cancelled" }, { title: "x" }]) {
      const answer = await finish(lease, body);
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual(lost);
    }
    expect(await getTask(app, lease.task)).toEqual(again.task);
    expect(await events()).toEqual([]);
  });

  it("the lease_id of another task, or on a task with no lease: 409 lease lost; not a UUID: 400", async () => {
    const { agent, lease } = await leased();
    const other = await createTask(app, agent.id);
    const events = await eventLog(app, agent.id);
    const withOther = await send(app, "PATCH", taskPath(other), { lease_id: lease.id, status: "cancelled" });
    expect(withOther.status).toBe(409);
    expect(withOther.body).toEqual(lost);
    const invalid = await send<{ details: unknown }>(app, "PATCH", taskPath(lease.task), {
      lease_id: "not-a-lease",
      status: "succeeded",
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details).toEqual({ issues: [{ field: "lease_id", message: "must be a UUID" }] });
    expect(await getTask(app, other)).toEqual(other);
    expect(await getTask(app, lease.task)).toEqual(lease.task);
    expect(await events()).toEqual([]);
  });

  it("error only comes with status failed, retry only with a lease_id too: 400, nothing changed", async () => {
    const { lease, events } = await leased();
    const cases: [Record<string, unknown>, string][] = [
      [{ lease_id: lease.id, status: "succeeded", error: failure }, "error"],
      // No field that changes anything: the body itself is refused.
      [{ error: failure }, "body"],
      [{ status: "failed", retry: true }, "retry"],
      [{ lease_id: lease.id, status: "succeeded", retry: false }, "retry"],
      [{ lease_id: lease.id, status: "failed", error: { code: "", message: "m" } }, "error.code"],
      [{ lease_id: lease.id, status: "failed", error: { code: "c" } }, "error.message"],
      [{ lease_id: lease.id, status: "failed", retry: "yes" }, "retry"],
    ];
    for (const [body, field] of cases) {
      const answer = await send<{ details: { issues: { field: string }[] } }>(app, "PATCH", taskPath(lease.task), body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.details.issues.map((issue) => issue.field)).toContain(field);
    }
    expect(await getTask(app, lease.task)).toEqual(lease.task);
    expect(await events()).toEqual([]);
  });
});

describe("tasks never leased keep docs/api/tasks.md's behaviour", () => {
  it("move through the table by PATCH alone; a failure may say why, and counts no attempt", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, { max_attempts: 3 });
    const running = await send<TaskOut>(app, "PATCH", taskPath(task), { status: "running" });
    expect(running.body).toMatchObject({ status: "running", lease: null, attempts: 0 });
    const failed = await send<TaskOut>(app, "PATCH", taskPath(task), { status: "failed", error: failure });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: "failed", attempts: 0, error: failure, lease: null });
    // A lease_id on a task that has none is a claim to a lease that is not there.
    const claimed = await send(app, "PATCH", taskPath(task), {
      lease_id: "0c3e8a2f-5b7d-4f1e-9a2c-6d8b4e0f1a37",
      title: "x",
    });
    expect(claimed.status).toBe(409);
    expect(claimed.body).toEqual(lost);
  });
});

describe("scheduling fields (docs/api/tasks.md)", () => {
  it("create takes max_attempts, run_at and deadline_at (any zone) and answers them in UTC", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, {
      max_attempts: 4,
      run_at: "2030-01-02T03:04:05.678+02:00",
      deadline_at: "2030-01-02T02:00:00Z",
    });
    expect(task).toMatchObject({
      max_attempts: 4,
      attempts: 0,
      run_at: "2030-01-02T01:04:05.678Z",
      deadline_at: "2030-01-02T02:00:00.000Z",
    });
    expect(await getTask(app, task)).toEqual(task);
    const none = await createTask(app, agent.id, { deadline_at: null });
    expect(none).toMatchObject({ max_attempts: 1, deadline_at: null, run_at: none.created_at });
  });

  it("create refuses bad values with 400 and creates nothing", async () => {
    const agent = await runningAgent(app);
    const soon = new Date(Date.now() + 60_000).toISOString();
    const cases: [Record<string, unknown>, string][] = [
      [{ max_attempts: 0 }, "max_attempts"],
      [{ max_attempts: 21 }, "max_attempts"],
      [{ max_attempts: "3" }, "max_attempts"],
      [{ max_attempts: 1.5 }, "max_attempts"],
      [{ run_at: "2030-01-02T03:04:05" }, "run_at"],
      [{ run_at: "tomorrow" }, "run_at"],
      [{ run_at: null }, "run_at"],
      [{ deadline_at: "2030-13-01T00:00:00Z" }, "deadline_at"],
      [{ run_at: "2030-01-02T00:00:00Z", deadline_at: "2030-01-01T23:59:59.999Z" }, "deadline_at"],
      [{ deadline_at: "2020-01-01T00:00:00Z" }, "deadline_at"],
      [{ run_at: soon, deadline_at: new Date(Date.parse(soon) - 1).toISOString() }, "deadline_at"],
    ];
    for (const [body, field] of cases) {
      const answer = await send<{ details: { issues: { field: string }[] } }>(
        app,
        "POST",
        `/agents/${agent.id}/tasks`,
        {
          title: "t",
          ...body,
        },
      );
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.details.issues.map((issue) => issue.field)).toEqual([field]);
    }
    expect(await app.database.db.prisma.task.count({ where: { agentId: agent.id } })).toBe(0);
  });

  it("PATCH: run_at only while pending, max_attempts and deadline_at while not final, never a deadline before run_at", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, { run_at: "2030-01-01T00:00:00Z" });
    const path = taskPath(task);
    const moved = await send<TaskOut>(app, "PATCH", path, {
      run_at: "2030-02-01T00:00:00Z",
      deadline_at: "2030-03-01T00:00:00Z",
      max_attempts: 2,
    });
    expect(moved.body).toMatchObject({
      run_at: "2030-02-01T00:00:00.000Z",
      deadline_at: "2030-03-01T00:00:00.000Z",
      max_attempts: 2,
      version: 2,
    });
    const unchanged = await getTask(app, task);
    for (const [body, field] of [
      [{ deadline_at: "2030-01-31T23:59:59Z" }, "deadline_at"],
      [{ run_at: "2030-03-01T00:00:00.001Z" }, "run_at"],
    ] as const) {
      const answer = await send<{ details: unknown }>(app, "PATCH", path, body);
      expect(answer.status).toBe(400);
      expect(answer.body.details).toEqual({
        issues: [
          {
            field,
            message: field === "run_at" ? "must not be later than deadline_at" : "must not be earlier than run_at",
          },
        ],
      });
    }
    expect(await getTask(app, task)).toEqual(unchanged);
    const cleared = await send<TaskOut>(app, "PATCH", path, { deadline_at: null });
    expect(cleared.body.deadline_at).toBeNull();
    expect((await send<TaskOut>(app, "PATCH", path, { status: "running" })).status).toBe(200);
    const late = await send(app, "PATCH", path, { run_at: "2030-05-01T00:00:00Z" });
    expect(late.status).toBe(409);
    expect(late.body).toEqual({
      error: "conflict",
      message: "run_at can only be changed while the task is pending; it is running",
      details: { field: "run_at", status: "running" },
    });
    expect((await send<TaskOut>(app, "PATCH", path, { max_attempts: 5 })).body.max_attempts).toBe(5);
    expect((await send(app, "PATCH", path, { status: "succeeded" })).status).toBe(200);
    for (const [field, value] of [
      ["max_attempts", 3],
      ["deadline_at", "2031-01-01T00:00:00Z"],
    ] as const) {
      const answer = await send(app, "PATCH", path, { [field]: value });
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({
        error: "conflict",
        message: `${field} can only be changed while the task is not final; it is succeeded`,
        details: { field, status: "succeeded" },
      });
    }
    expect(unchanged).toEqual(moved.body);
  });

  it("a deadline set on a leased task caps its lease", async () => {
    const { agent, lease } = await leased();
    const deadline = new Date(Date.now() + 20_000).toISOString();
    const answer = await send<TaskOut>(app, "PATCH", taskPath(lease.task), { deadline_at: deadline });
    expect(answer.body.lease).toEqual({ ...lease.task.lease, expires_at: deadline });
    expect((await send<LeaseOut>(app, "GET", leasePath(agent.id, lease.id))).body.expires_at).toBe(deadline);
  });
});
