import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScheduleOut } from "../src/modules/schedules/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent } from "./helpers/factories.js";

// The scheduler in the app (docs/api/schedules.md): run times, policies, pause, run now, the agent's
// state; and next_run_at across daylight-saving changes. Intervals of 1 s (SCHEDULE_MIN_EVERY_SECONDS)
// keep it quick.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ SCHEDULE_MIN_EVERY_SECONDS: "1" });
});
afterAll(async () => {
  await app.close();
});

type Body = Record<string, unknown>;

async function createSchedule(agentId: string, body: Body): Promise<ScheduleOut> {
  const res = await app.request(`/agents/${agentId}/schedules`, { method: "POST", json: body });
  const created = await res.json();
  expect(res.status, JSON.stringify(created)).toBe(201);
  return created as ScheduleOut;
}

async function patchSchedule(schedule: ScheduleOut, body: Body): Promise<ScheduleOut> {
  const res = await app.request(`/agents/${schedule.agent_id}/schedules/${schedule.id}`, {
    method: "PATCH",
    json: body,
  });
  const patched = await res.json();
  expect(res.status, JSON.stringify(patched)).toBe(200);
  return patched as ScheduleOut;
}

const getSchedule = async (schedule: ScheduleOut) =>
  (await (await app.request(`/agents/${schedule.agent_id}/schedules/${schedule.id}`)).json()) as ScheduleOut;

/** The schedule's tasks, oldest run time first (run nows last). */
async function tasksOf(schedule: ScheduleOut): Promise<TaskOut[]> {
  const res = await app.request(`/agents/${schedule.agent_id}/tasks?limit=1000`);
  const tasks = ((await res.json()) as TaskOut[]).filter((task) => task.schedule_id === schedule.id);
  const key = (task: TaskOut) => task.scheduled_for ?? "~";
  return tasks.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Polls until `check` holds (every 50 ms, at most `timeoutMs`), and returns the last value read. */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the scheduler moved the schedule's next run time past `at` (ms): the run times before it were decided. */
const passed = (schedule: ScheduleOut, at: number) =>
  until(
    () => getSchedule(schedule),
    (s) => s.next_run_at !== null && Date.parse(s.next_run_at) > at,
  );

const soon = (ms = 1_000) => new Date(Math.ceil((Date.now() + ms) / 1000) * 1000);

async function metric(name: string): Promise<number> {
  const text = await (await app.request("/metrics")).text();
  const line = text.split("\n").find((row) => row.startsWith(`${name} `));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

// Independent of one another (each its own agent): run at once, to keep the file quick.
describe.concurrent("run times", () => {
  it("an interval creates one task per run time, at that time, with schedule_id and scheduled_for", async () => {
    const agent = await createAgent(app);
    const start = soon();
    const createdBefore = await metric('schedule_runs_total{outcome="created"}');
    const schedule = await createSchedule(agent.id, {
      every_seconds: 1,
      start_at: start.toISOString(),
      task: { title: "tick", priority: 2, metadata: { kind: "tick" }, deadline_seconds: 30 },
    });
    expect(schedule.next_run_at).toBe(start.toISOString());
    const tasks = await until(
      () => tasksOf(schedule),
      (found) => found.length >= 3,
    );
    for (const [k, task] of tasks.slice(0, 3).entries()) {
      const at = new Date(start.getTime() + k * 1000).toISOString();
      expect(task).toMatchObject({
        title: "tick",
        priority: 2,
        metadata: { kind: "tick" },
        status: "pending",
        schedule_id: schedule.id,
        scheduled_for: at,
        run_at: at,
        deadline_at: new Date(Date.parse(at) + 30_000).toISOString(),
      });
      // Each run time's task within 2 s of it (docs/api/schedules.md).
      expect(Date.parse(task.created_at) - Date.parse(at)).toBeLessThanOrEqual(2_000);
      expect(Date.parse(task.created_at)).toBeGreaterThanOrEqual(Date.parse(at));
    }
    const event = await app.database.db.prisma.event.findFirst({ where: { taskId: tasks[0]?.id } });
    expect(event?.type).toBe("task.created");
    expect(JSON.parse(event?.data ?? "{}").task).toMatchObject({
      schedule_id: schedule.id,
      scheduled_for: start.toISOString(),
    });

    // Paused: no run time, nothing created; resumed: from now on.
    const paused = await patchSchedule(schedule, { paused: true });
    expect(paused.next_run_at).toBeNull();
    const count = (await tasksOf(schedule)).length;
    const pausedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await tasksOf(schedule)).toHaveLength(count);
    const resumed = await patchSchedule(schedule, { paused: false });
    expect(Date.parse(resumed.next_run_at as string)).toBeGreaterThan(Date.now() - 1_000);
    const after = await until(
      () => tasksOf(schedule),
      (found) => found.length > count,
    );
    // Nothing for the run times while paused: the next task is for a time after the resume.
    expect(Date.parse(after[count]?.scheduled_for as string)).toBeGreaterThan(pausedAt + 2_000);
    const last = await getSchedule(schedule);
    await patchSchedule(schedule, { paused: true });
    const made = await tasksOf(schedule);
    expect(made.map((task) => task.scheduled_for)).toEqual([...new Set(made.map((task) => task.scheduled_for))]);
    expect(last.last_task_id).not.toBeNull();
    expect(made.map((task) => task.id)).toContain(last.last_task_id);
    expect(await metric('schedule_runs_total{outcome="created"}')).toBeGreaterThanOrEqual(createdBefore + made.length);
    expect(await metric("schedule_run_lag_seconds_count")).toBeGreaterThanOrEqual(made.length);
  });

  it("a run time's task carries the template's concurrency_key", async () => {
    const agent = await createAgent(app);
    const start = soon();
    const schedule = await createSchedule(agent.id, {
      every_seconds: 60,
      start_at: start.toISOString(),
      task: { title: "export", concurrency_key: "acme" },
    });
    const [task] = await until(
      () => tasksOf(schedule),
      (found) => found.length >= 1,
    );
    await patchSchedule(schedule, { paused: true });
    expect(task).toMatchObject({
      title: "export",
      concurrency_key: "acme",
      schedule_id: schedule.id,
      scheduled_for: start.toISOString(),
    });
    const event = await app.database.db.prisma.event.findFirst({ where: { taskId: task?.id } });
    expect(JSON.parse(event?.data ?? "{}").task).toMatchObject({ concurrency_key: "acme" });
  });

  it("overlap skip: no new task while the previous one is not final, a run now included", async () => {
    const agent = await createAgent(app);
    const skippedBefore = await metric('schedule_runs_total{outcome="skipped_overlap"}');
    const start = soon();
    const schedule = await createSchedule(agent.id, {
      every_seconds: 1,
      start_at: start.toISOString(),
      overlap: "skip",
      task: { title: "one at a time" },
    });
    const [first] = await until(
      () => tasksOf(schedule),
      (found) => found.length === 1,
    );
    // Two more run times pass: skipped, the first task still pending.
    await passed(schedule, start.getTime() + 2_500);
    expect(await tasksOf(schedule)).toHaveLength(1);
    expect(await metric('schedule_runs_total{outcome="skipped_overlap"}')).toBeGreaterThanOrEqual(skippedBefore + 2);
    // Final: the next run time creates a task again.
    for (const status of ["running", "succeeded"]) {
      const res = await app.request(`/agents/${agent.id}/tasks/${first?.id}`, { method: "PATCH", json: { status } });
      expect(res.status).toBe(200);
    }
    const second = await until(
      () => tasksOf(schedule),
      (found) => found.length === 2,
    );
    expect(Date.parse(second[1]?.scheduled_for as string)).toBeGreaterThan(start.getTime() + 2_000);
    // A run now is the previous task: while it is pending, the clock creates nothing, though the one before is final.
    const ran = await app.request(`/agents/${agent.id}/schedules/${schedule.id}/runs`, { method: "POST" });
    expect(ran.status).toBe(201);
    const cancel = { method: "PATCH", json: { status: "cancelled" } };
    expect((await app.request(`/agents/${agent.id}/tasks/${second[1]?.id}`, cancel)).status).toBe(200);
    const runNow = (await ran.json()) as TaskOut;
    await passed(schedule, Date.now() + 2_000);
    const all = await tasksOf(schedule);
    expect(all.map((task) => task.id)).toEqual([first?.id, second[1]?.id, runNow.id]);
    await patchSchedule(schedule, { paused: true });
  });

  it("a stopped agent's schedule creates nothing and moves on; started again, it creates tasks", async () => {
    const agent = await createAgent(app);
    const stop = await app.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "stopped" } });
    expect(stop.status).toBe(200);
    const start = soon();
    const schedule = await createSchedule(agent.id, {
      every_seconds: 1,
      start_at: start.toISOString(),
      task: { title: "t" },
    });
    await passed(schedule, start.getTime() + 1_500);
    expect(await tasksOf(schedule)).toEqual([]);
    expect((await getSchedule(schedule)).last_task_id).toBeNull();
    const restart = await app.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "idle" } });
    expect(restart.status).toBe(200);
    const resumedAt = Date.now();
    const [task] = await until(
      () => tasksOf(schedule),
      (found) => found.length > 0,
    );
    expect(Date.parse(task?.scheduled_for as string)).toBeGreaterThan(resumedAt - 1_000);
    await patchSchedule(schedule, { paused: true });
  });

  it("deleting the agent deletes its schedule mid-run; the other schedules keep running", async () => {
    const [doomed, other] = [await createAgent(app), await createAgent(app)];
    const start = soon();
    const body = { every_seconds: 1, start_at: start.toISOString(), task: { title: "t" } };
    const [gone, kept] = [await createSchedule(doomed.id, body), await createSchedule(other.id, body)];
    await until(
      () => tasksOf(gone),
      (found) => found.length > 0,
    );
    expect((await app.request(`/agents/${doomed.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await app.request(`/agents/${doomed.id}/schedules/${gone.id}`)).status).toBe(404);
    const count = (await tasksOf(kept)).length;
    await until(
      () => tasksOf(kept),
      (found) => found.length >= count + 2,
    );
    expect(await app.database.db.prisma.task.count({ where: { scheduleId: gone.id } })).toBe(0);
    expect(app.logs.filter((line) => line.msg === "running schedules failed; trying again shortly")).toEqual([]);
    await patchSchedule(kept, { paused: true });
  });

  it("end_at ends the schedule: no task after it, next_run_at null", async () => {
    const agent = await createAgent(app);
    const start = soon();
    const schedule = await createSchedule(agent.id, {
      every_seconds: 1,
      start_at: start.toISOString(),
      end_at: new Date(start.getTime() + 1_000).toISOString(),
      task: { title: "t" },
    });
    const ended = await until(
      () => getSchedule(schedule),
      (s) => s.next_run_at === null,
    );
    expect(ended.last_run_at).toBe(new Date(start.getTime() + 1_000).toISOString());
    expect((await tasksOf(schedule)).map((task) => task.scheduled_for)).toEqual([
      start.toISOString(),
      new Date(start.getTime() + 1_000).toISOString(),
    ]);
  });
});

describe("next_run_at across the 2027 daylight-saving changes", () => {
  /** The run times of `cron` in `timezone` from `from` on, read from next_run_at by moving start_at past each. */
  async function runTimes(cron: string, timezone: string, from: string, count: number): Promise<string[]> {
    const agent = await createAgent(app);
    let schedule = await createSchedule(agent.id, { cron, timezone, start_at: from, task: { title: "t" } });
    const times: string[] = [];
    for (let i = 0; i < count; i++) {
      const next = schedule.next_run_at as string;
      times.push(next);
      schedule = await patchSchedule(schedule, { start_at: new Date(Date.parse(next) + 1).toISOString() });
    }
    return times;
  }

  it("America/New_York: 02:30 skipped on 14 March runs once at 03:00 EDT; 01:30 repeated on 7 November runs once", async () => {
    expect(await runTimes("30 2 * * *", "America/New_York", "2027-03-13T12:00:00Z", 3)).toEqual([
      "2027-03-14T07:00:00.000Z",
      "2027-03-15T06:30:00.000Z",
      "2027-03-16T06:30:00.000Z",
    ]);
    expect(await runTimes("30 1 * * *", "America/New_York", "2027-11-06T12:00:00Z", 3)).toEqual([
      "2027-11-07T05:30:00.000Z",
      "2027-11-08T06:30:00.000Z",
      "2027-11-09T06:30:00.000Z",
    ]);
    // Every half hour through both changes: 02:00 and 02:30 collapse into 03:00; 01:00 and 01:30 EST never repeat.
    expect(await runTimes("*/30 * * * *", "America/New_York", "2027-03-14T06:00:00Z", 4)).toEqual([
      "2027-03-14T06:00:00.000Z",
      "2027-03-14T06:30:00.000Z",
      "2027-03-14T07:00:00.000Z",
      "2027-03-14T07:30:00.000Z",
    ]);
    expect(await runTimes("*/30 * * * *", "America/New_York", "2027-11-07T05:00:00Z", 4)).toEqual([
      "2027-11-07T05:00:00.000Z",
      "2027-11-07T05:30:00.000Z",
      "2027-11-07T07:00:00.000Z",
      "2027-11-07T07:30:00.000Z",
    ]);
  });

  it("Europe/Berlin: 02:30 skipped on 28 March runs once at 03:00 CEST; 02:30 repeated on 31 October runs once", async () => {
    expect(await runTimes("30 2 * * *", "Europe/Berlin", "2027-03-27T12:00:00Z", 3)).toEqual([
      "2027-03-28T01:00:00.000Z",
      "2027-03-29T00:30:00.000Z",
      "2027-03-30T00:30:00.000Z",
    ]);
    expect(await runTimes("30 2 * * *", "Europe/Berlin", "2027-10-30T12:00:00Z", 3)).toEqual([
      "2027-10-31T00:30:00.000Z",
      "2027-11-01T01:30:00.000Z",
      "2027-11-02T01:30:00.000Z",
    ]);
    expect(await runTimes("*/30 * * * *", "Europe/Berlin", "2027-10-31T00:00:00Z", 4)).toEqual([
      "2027-10-31T00:00:00.000Z",
      "2027-10-31T00:30:00.000Z",
      "2027-10-31T02:00:00.000Z",
      "2027-10-31T02:30:00.000Z",
    ]);
  });
});
