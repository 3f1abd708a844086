import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { ScheduleOut } from "../src/modules/schedules/schemas.js";
import { testProvider } from "./helpers/databases.js";
import { call, servicesOnTestDatabase } from "./helpers/service.js";

// Schedules across real processes (docs/api/schedules.md): the service stopped across run times,
// and exactly one task per run time with instances killed midway.
const { database, start } = servicesOnTestDatabase({ SCHEDULE_MIN_EVERY_SECONDS: "1" });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A whole second at least `ms` from now. */
const secondAfter = (ms: number) => Math.ceil((Date.now() + ms) / 1000) * 1000;
const iso = (ms: number) => new Date(ms).toISOString();

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

async function createAgent(baseUrl: string): Promise<AgentOut> {
  const created = await call<AgentOut>(baseUrl, "POST", "/agents", { name: "clock", type: "worker" });
  expect(created.status).toBe(201);
  return created.body;
}

async function createSchedules(baseUrl: string, agentId: string, count: number, body: Record<string, unknown>) {
  const made: ScheduleOut[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, (_, j) =>
        call<ScheduleOut>(baseUrl, "POST", `/agents/${agentId}/schedules`, {
          ...body,
          task: { title: `s${i + j}` },
        }),
      ),
    );
    for (const created of batch) {
      expect(created.status).toBe(201);
      made.push(created.body);
    }
  }
  return made;
}

/** The run times each schedule of `agentId` made a task for, by schedule id (as the database holds them). */
async function runTimesOf(agentId: string): Promise<Map<string, string[]>> {
  const tasks = await database().db.prisma.task.findMany({
    where: { agentId, scheduleId: { not: null } },
    select: { scheduleId: true, scheduledFor: true },
  });
  const bySchedule = new Map<string, string[]>();
  for (const task of tasks) {
    const times = bySchedule.get(task.scheduleId as string) ?? [];
    times.push(task.scheduledFor?.toISOString() ?? "run now");
    bySchedule.set(task.scheduleId as string, times);
  }
  for (const times of bySchedule.values()) times.sort();
  return bySchedule;
}

const scheduledTasks = (agentId: string) =>
  database().db.prisma.task.count({ where: { agentId, scheduleId: { not: null } } });

/** The worker processes of a WEB_CONCURRENCY > 1 primary (tsx's own helper processes left out). */
function workersOf(primaryPid: number): number[] {
  const children = execFileSync("pgrep", ["-P", String(primaryPid)], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map(Number);
  return children.filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("src/main.ts"));
}

describe("catch-up after downtime", () => {
  it("stopped across two run times: latest makes one task for the second, none makes nothing", async () => {
    const first = await start();
    const agent = await createAgent(first.baseUrl);
    const runTime = secondAfter(6_000);
    const body = { every_seconds: 20, start_at: iso(runTime) };
    const [latest, none] = [
      (await createSchedules(first.baseUrl, agent.id, 1, { ...body, catch_up: "latest" }))[0] as ScheduleOut,
      (await createSchedules(first.baseUrl, agent.id, 1, { ...body, catch_up: "none" }))[0] as ScheduleOut,
    ];
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    // Down across the run times runTime and runTime + 20 s: the service starts 6 s after the second,
    // later than a run on time (5 s), and has until the third (runTime + 40 s) to decide: 14 s for a
    // start on a busy machine.
    expect(Date.now()).toBeLessThan(runTime);
    await sleep(runTime + 26_000 - Date.now());
    const second = await start();
    await until(
      async () =>
        (await database().db.prisma.schedule.count({
          where: { id: { in: [latest.id, none.id] }, nextRunAt: new Date(runTime + 40_000) },
        })) === 2,
      30_000,
      "both schedules past their missed run times",
    );
    const times = await runTimesOf(agent.id);
    expect(times.get(latest.id)).toEqual([iso(runTime + 20_000)]);
    expect(times.get(none.id)).toBeUndefined();
    const seen = await call<ScheduleOut>(second.baseUrl, "GET", `/agents/${agent.id}/schedules/${latest.id}`);
    expect(seen.body).toMatchObject({ last_run_at: iso(runTime + 20_000), next_run_at: iso(runTime + 40_000) });
    const metrics = await (await fetch(`${second.baseUrl}/metrics`)).text();
    expect(metrics).toContain('schedule_runs_total{outcome="skipped_missed"} 3');
    expect(metrics).toContain('schedule_runs_total{outcome="created"} 1');
    await second.kill();
  }, 90_000);
});

describe.runIf(testProvider === "postgresql")("two instances on PostgreSQL", () => {
  it("200 schedules due in the same second, one instance killed with kill -9 midway: each run time exactly one task", async () => {
    const [a, b] = await Promise.all([start(), start()]);
    const agent = await createAgent(a.baseUrl);
    const runTime = secondAfter(8_000);
    const schedules = await createSchedules(a.baseUrl, agent.id, 200, { every_seconds: 2, start_at: iso(runTime) });
    expect(Date.now()).toBeLessThan(runTime);
    // Killed as soon as the first run's tasks are committed, while the rest are being made.
    let atKill = 0;
    await until(
      async () => {
        atKill = await scheduledTasks(agent.id);
        return atKill > 0;
      },
      runTime + 10_000 - Date.now(),
      "a first task",
      2,
    );
    await a.kill();
    // Killed while the first run time's tasks were being made.
    expect(atKill).toBeLessThan(200);
    // The survivor makes the rest, and the run times after.
    const third = new Date(runTime + 4_000);
    await until(
      async () =>
        (await database().db.prisma.schedule.count({ where: { agentId: agent.id, lastRunAt: { gte: third } } })) ===
        200,
      30_000,
      "every schedule's third run time",
    );
    await b.kill();
    const times = await runTimesOf(agent.id);
    const stored = await database().db.prisma.schedule.findMany({ where: { agentId: agent.id } });
    expect(times.size).toBe(200);
    for (const schedule of stored) {
      const last = schedule.lastRunAt?.getTime() as number;
      const expected = Array.from({ length: (last - runTime) / 2_000 + 1 }, (_, k) => iso(runTime + k * 2_000));
      expect(times.get(schedule.id), schedule.id).toEqual(expected);
      expect(schedule.nextRunAt?.getTime()).toBe(last + 2_000);
    }
    expect(new Set(stored.map((s) => s.id))).toEqual(new Set(schedules.map((s) => s.id)));
  }, 120_000);
});

describe.runIf(testProvider === "sqlite")("WEB_CONCURRENCY=2 on SQLite", () => {
  it("200 schedules due in the same second, one worker killed with kill -9 midway: exactly one task each", async () => {
    const service = await start({ WEB_CONCURRENCY: "2" });
    const agent = await createAgent(service.baseUrl);
    const runTime = secondAfter(8_000);
    const schedules = await createSchedules(service.baseUrl, agent.id, 200, {
      every_seconds: 60,
      start_at: iso(runTime),
    });
    const workers = workersOf(service.child.pid as number);
    expect(workers).toHaveLength(2);
    expect(Date.now()).toBeLessThan(runTime);
    let atKill = 0;
    await until(
      async () => {
        atKill = await scheduledTasks(agent.id);
        return atKill > 0;
      },
      runTime + 10_000 - Date.now(),
      "a first task",
      2,
    );
    process.kill(workers[0] as number, "SIGKILL");
    // The primary takes the other worker down with it (a worker died); started again, the service makes the rest.
    await service.exited;
    const again = await start({ WEB_CONCURRENCY: "2" });
    await until(
      async () =>
        (await database().db.prisma.schedule.count({
          where: { agentId: agent.id, lastRunAt: new Date(runTime) },
        })) === 200,
      30_000,
      "every schedule's run time",
    );
    const times = await runTimesOf(agent.id);
    expect(times.size).toBe(200);
    for (const schedule of schedules) expect(times.get(schedule.id), schedule.id).toEqual([iso(runTime)]);
    expect(await scheduledTasks(agent.id)).toBe(200);
    // Killed while the run time's tasks were being made.
    expect(atKill).toBeLessThan(200);
    await again.kill();
  }, 120_000);
});
