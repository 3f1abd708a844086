import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDatabase, type Database } from "../src/db/index.js";
import { createLogger } from "../src/logger.js";
import { startSettler } from "../src/modules/leases/settler.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTask } from "./helpers/factories.js";
import { eventLog, eventually, getTask, runningAgent, send, takeLease, taskPath } from "./helpers/leases.js";

// docs/api/leases.md: expired leases and passed deadlines are settled by the service, once.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ TASK_RETRY_BASE_SECONDS: "0.5", TASK_RETRY_MAX_SECONDS: "60" });
});
afterAll(() => app.close());

const policy = { baseSeconds: 0.5, maxSeconds: 60 };
const plus = (time: string, ms: number) => new Date(Date.parse(time) + ms).toISOString();
/** docs/api/leases.md's bound, plus the time it takes to notice on a loaded machine (the read below polls every 25 ms). */
const settledWithin = 2_000;
const expired = {
  code: "lease_expired",
  message: "The worker's lease expired before the task finished",
  details: null,
};
const deadline = { code: "deadline_exceeded", message: "The task was not finished by its deadline", details: null };

/** Waits until the task leaves `status` (or its version moves), and checks it did so within 2 s of `dueAt`. */
async function settledAfter(task: TaskOut, dueAt: string) {
  const settled = await eventually(
    () => getTask(app, task),
    (now) => now.version !== task.version,
    Date.parse(dueAt) - Date.now() + settledWithin + 5_000,
  );
  expect(settled.version, "settled at all").toBe(task.version + 1);
  const lateness = Date.parse(settled.updated_at) - Date.parse(dueAt);
  expect(lateness).toBeGreaterThanOrEqual(0);
  expect(lateness).toBeLessThanOrEqual(settledWithin);
  return settled;
}

describe("an expired lease", () => {
  it("is retried after the delay while attempts remain, then failed: attempts and error right, one event each", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, { max_attempts: 2 });
    const events = await eventLog(app, agent.id);
    const first = await takeLease(app, agent.id, { duration_seconds: 5 });
    const retried = await settledAfter(first.task, first.expires_at);
    expect(retried).toEqual({
      ...first.task,
      status: "pending",
      attempts: 1,
      error: expired,
      lease: null,
      run_at: plus(retried.updated_at, 500),
      updated_at: retried.updated_at,
      version: first.task.version + 1,
    });
    const second = await takeLease(app, agent.id, { duration_seconds: 5, wait_seconds: 5 });
    expect(second.task_id).toBe(task.id);
    const failed = await settledAfter(second.task, second.expires_at);
    expect(failed).toEqual({
      ...second.task,
      status: "failed",
      attempts: 2,
      error: expired,
      lease: null,
      updated_at: failed.updated_at,
      version: second.task.version + 1,
    });
    const log = await events();
    expect(log.map((event) => event.type)).toEqual([
      "task.leased",
      "task.lease_expired",
      "task.leased",
      "task.lease_expired",
    ]);
    expect(log[1]).toEqual({
      type: "task.lease_expired",
      occurred_at: retried.updated_at,
      task_id: task.id,
      data: {
        task: retried,
        changes: {
          status: ["running", "pending"],
          attempts: [0, 1],
          run_at: [task.run_at, retried.run_at],
          lease: [first.task.lease, null],
          error: [null, expired],
        },
      },
    });
    expect(log[3]?.data).toEqual({
      task: failed,
      changes: {
        status: ["running", "failed"],
        attempts: [1, 2],
        lease: [second.task.lease, null],
      },
    });
  }, 40_000);

  it("while its cancellation is asked for: cancelled, not retried", async () => {
    const agent = await runningAgent(app);
    await createTask(app, agent.id, { max_attempts: 3 });
    const lease = await takeLease(app, agent.id, { duration_seconds: 5 });
    const asked = await send<TaskOut>(app, "PATCH", taskPath(lease.task), { status: "cancelled" });
    expect(asked.status).toBe(202);
    const settled = await settledAfter(asked.body, lease.expires_at);
    expect(settled).toMatchObject({ status: "cancelled", attempts: 1, error: expired, lease: null });
  }, 30_000);
});

describe("a passed deadline", () => {
  it("fails a leased task with deadline_exceeded; its lease is gone, the attempt counted", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, {
      max_attempts: 3,
      deadline_at: new Date(Date.now() + 1_500).toISOString(),
    });
    const events = await eventLog(app, agent.id);
    const lease = await takeLease(app, agent.id, { duration_seconds: 60 });
    expect(lease.expires_at).toBe(task.deadline_at);
    const failed = await settledAfter(lease.task, task.deadline_at as string);
    expect(failed).toEqual({
      ...lease.task,
      status: "failed",
      attempts: 1,
      error: deadline,
      lease: null,
      updated_at: failed.updated_at,
      version: lease.task.version + 1,
    });
    expect((await send(app, "GET", `/agents/${agent.id}/leases/${lease.id}`)).status).toBe(404);
    const log = await events();
    expect(log.map((event) => event.type)).toEqual(["task.leased", "task.failed"]);
    expect(log[1]?.data).toEqual({
      task: failed,
      changes: {
        status: ["running", "failed"],
        attempts: [0, 1],
        lease: [lease.task.lease, null],
        error: [null, deadline],
      },
    });
  }, 20_000);

  it("fails a pending task that never ran, with no attempt counted; it is never leased", async () => {
    const agent = await runningAgent(app);
    const now = Date.now();
    const task = await createTask(app, agent.id, {
      run_at: new Date(now + 500).toISOString(),
      deadline_at: new Date(now + 1_000).toISOString(),
    });
    const failed = await settledAfter(task, task.deadline_at as string);
    expect(failed).toMatchObject({ status: "failed", attempts: 0, error: deadline, lease: null });
    expect((await send(app, "POST", `/agents/${agent.id}/leases`, {})).status).toBe(204);
  }, 20_000);
});

describe("several settlers on one database (other instances)", () => {
  const others: { db: Database; stop: () => Promise<void> }[] = [];
  afterAll(async () => {
    for (const other of others) {
      await other.stop();
      await other.db.close();
    }
  });

  it("settle each expiry exactly once: one event, one attempt", async () => {
    for (let i = 0; i < 3; i++) {
      const db = await connectDatabase(app.database.url);
      const settler = startSettler({ db, policy, logger: createLogger("silent") });
      others.push({ db, stop: () => settler.stop() });
    }
    const agent = await runningAgent(app);
    for (let i = 0; i < 10; i++) await createTask(app, agent.id, { max_attempts: 3 });
    const events = await eventLog(app, agent.id);
    const leases = [];
    for (let i = 0; i < 10; i++) leases.push(await takeLease(app, agent.id, { duration_seconds: 5 }));
    const last = leases.at(-1)?.expires_at as string;
    for (const lease of leases) {
      const settled = await settledAfter(lease.task, lease.expires_at);
      expect(settled).toMatchObject({ status: "pending", attempts: 1, error: expired });
    }
    // Long after: still one expiry per lease.
    await sleep(Math.max(0, Date.parse(last) + 1_000 - Date.now()));
    const log = await events();
    expect(
      log
        .filter((event) => event.type === "task.lease_expired")
        .map((event) => event.task_id)
        .sort(),
    ).toEqual(leases.map((lease) => lease.task_id).sort());
    expect(log).toHaveLength(20);
  }, 40_000);
});

describe("with nothing due", () => {
  it("does no work at all, and wakes for what becomes due", async () => {
    const db = await connectDatabase(app.database.url);
    let statements = 0;
    const counted = new Proxy(db, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== "function") return value;
        if (name === "all" || name === "get" || name === "run" || name === "transaction") {
          return (...args: unknown[]) => {
            statements++;
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    }) as Database;
    // What the other tests left unsettled is ended here, so that nothing is due at all.
    await app.database.db.prisma.task.updateMany({
      where: { status: { in: ["pending", "running"] } },
      data: { status: "cancelled", leaseId: null, leaseExpiresAt: null, leaseWorker: null, leaseCreatedAt: null },
    });
    const settler = startSettler({ db: counted, policy, logger: createLogger("silent") });
    try {
      // Its first look, and the one its LISTEN connection asks for once established (PostgreSQL).
      let seen = -1;
      await eventually(
        async () => {
          const quiet = statements === seen;
          seen = statements;
          await sleep(300);
          return quiet;
        },
        (quiet) => quiet,
        10_000,
      );
      expect(seen).toBeGreaterThan(0);
      expect(settler.alarm).toBeUndefined();
      statements = 0;
      await sleep(1_500);
      expect(statements).toBe(0);

      // A deadline set anywhere moves the alarm to it.
      const agent = await runningAgent(app);
      const due = new Date(Date.now() + 60_000).toISOString();
      await createTask(app, agent.id, { deadline_at: due });
      const alarm = await eventually(
        async () => settler.alarm,
        (at) => at !== undefined,
        2_000,
      );
      expect(alarm).toBe(Date.parse(due));
    } finally {
      await settler.stop();
      await db.close();
    }
  }, 30_000);
});
