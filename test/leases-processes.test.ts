import { spawn } from "node:child_process";
import { once } from "node:events";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { LeaseOut } from "../src/modules/leases/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { call, type ServiceProcess, servicesOnTestDatabase } from "./helpers/service.js";

// Leases across real processes (docs/api/leases.md): two service instances on one
// database, a worker killed mid-task, the service itself killed with leases out.
const projectRoot = new URL("..", import.meta.url).pathname;
const settings = { TASK_RETRY_BASE_SECONDS: "0.5", TASK_RETRY_MAX_SECONDS: "5" };
const expired = {
  code: "lease_expired",
  message: "The worker's lease expired before the task finished",
  details: null,
};

const { database, start } = servicesOnTestDatabase(settings);

async function runningAgent(baseUrl: string): Promise<AgentOut> {
  const agent = await call<AgentOut>(baseUrl, "POST", "/agents", { name: "fleet", type: "worker" });
  expect((await call(baseUrl, "PATCH", `/agents/${agent.body.id}`, { status: "running" })).status).toBe(200);
  return agent.body;
}

async function createTasks(baseUrl: string, agentId: string, count: number, body: Record<string, unknown> = {}) {
  const tasks: TaskOut[] = [];
  for (let i = 0; i < count; i++) {
    const created = await call<TaskOut>(baseUrl, "POST", `/agents/${agentId}/tasks`, { title: `t${i}`, ...body });
    expect(created.status).toBe(201);
    tasks.push(created.body);
  }
  return tasks;
}

/** Polls until `check` holds, up to `timeoutMs`; returns the last value read. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("two service processes on one database", () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  beforeAll(async () => {
    [a, b] = await Promise.all([start(), start()]);
  }, 120_000);

  it("20 lease requests on 10 ready tasks, half to each: 10 distinct tasks and 10 × 204", async () => {
    const agent = await runningAgent(a.baseUrl);
    const tasks = await createTasks(a.baseUrl, agent.id, 10);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call<LeaseOut>((i % 2 === 0 ? a : b).baseUrl, "POST", `/agents/${agent.id}/leases`, { worker: `w${i}` }),
      ),
    );
    const granted = answers.filter((answer) => answer.status === 201);
    expect(granted).toHaveLength(10);
    expect(answers.filter((answer) => answer.status === 204)).toHaveLength(10);
    expect(new Set(granted.map((answer) => answer.body.task_id))).toEqual(new Set(tasks.map((task) => task.id)));
    // Each lease is the one its task holds, seen from either instance.
    for (const [i, answer] of granted.entries()) {
      const lease = await call<LeaseOut>(
        (i % 2 === 0 ? b : a).baseUrl,
        "GET",
        `/agents/${agent.id}/leases/${answer.body.id}`,
      );
      expect(lease.body.task.lease?.id).toBe(answer.body.id);
    }
  }, 60_000);

  it("a long poll on one instance is answered within 200 ms of a task's creation through the other", async () => {
    const agent = await runningAgent(a.baseUrl);
    for (let round = 0; round < 3; round++) {
      const polling = call<LeaseOut>(a.baseUrl, "POST", `/agents/${agent.id}/leases`, { wait_seconds: 20 });
      // Time for the poll to find nothing and begin waiting.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const created = await call<TaskOut>(b.baseUrl, "POST", `/agents/${agent.id}/tasks`, { title: `r${round}` });
      const createdAt = Date.now();
      const answer = await polling;
      expect(answer.status).toBe(201);
      expect(answer.body.task_id).toBe(created.body.id);
      expect(answer.at - createdAt).toBeLessThan(200);
    }
  }, 60_000);

  it("a worker killed mid-task: its task is retried, then failed after max_attempts, attempts and error right", async () => {
    const agent = await runningAgent(a.baseUrl);
    const [task] = await createTasks(b.baseUrl, agent.id, 1, { max_attempts: 2 });
    const holdAndDie = async () => {
      const worker = spawn(process.execPath, ["--import", "tsx", "test/helpers/lease-holder.ts"], {
        cwd: projectRoot,
        env: { ...process.env, API_URL: a.baseUrl, AGENT_ID: agent.id },
        stdio: ["ignore", "pipe", "inherit"],
      });
      const [line] = (await once(worker.stdout, "data")) as [Buffer];
      const lease = JSON.parse(line.toString()) as LeaseOut;
      expect(lease.task_id).toBe(task?.id);
      worker.kill("SIGKILL");
      await once(worker, "exit");
      return lease;
    };
    const read = () => call<TaskOut>(b.baseUrl, "GET", `/agents/${agent.id}/tasks/${task?.id}`);

    const first = await holdAndDie();
    const retried = await eventually(read, (t) => t.body.status === "pending", 10_000);
    expect(retried.body).toMatchObject({ status: "pending", attempts: 1, error: expired, lease: null });
    expect(Date.parse(retried.body.updated_at) - Date.parse(first.expires_at)).toBeLessThanOrEqual(2_000);

    const second = await holdAndDie();
    expect(second.id).not.toBe(first.id);
    const failed = await eventually(read, (t) => t.body.status === "failed", 10_000);
    expect(failed.body).toMatchObject({ status: "failed", attempts: 2, error: expired, lease: null });
    expect(Date.parse(failed.body.updated_at) - Date.parse(second.expires_at)).toBeLessThanOrEqual(2_000);
    const events = await database().db.prisma.event.findMany({ where: { taskId: task?.id }, orderBy: { id: "asc" } });
    expect(events.map((event) => event.type)).toEqual([
      "task.created",
      "task.leased",
      "task.lease_expired",
      "task.leased",
      "task.lease_expired",
    ]);
  }, 60_000);

  it("shutting down answers a waiting long poll with 204 at once, then exits 0", async () => {
    const agent = await runningAgent(b.baseUrl);
    const polling = call(b.baseUrl, "POST", `/agents/${agent.id}/leases`, { wait_seconds: 20 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const signalled = Date.now();
    b.child.kill("SIGTERM");
    const answer = await polling;
    expect(answer.status).toBe(204);
    expect(answer.at - signalled).toBeLessThan(1_000);
    expect(await b.exited).toBe(0);
  }, 30_000);
});

describe("the service killed with leases out", () => {
  it("after a restart, every lease it granted is settled: retried or failed, none left running", async () => {
    const first = await start();
    const agent = await runningAgent(first.baseUrl);
    const single = await createTasks(first.baseUrl, agent.id, 25, { max_attempts: 1 });
    const twice = await createTasks(first.baseUrl, agent.id, 25, { max_attempts: 2 });
    const leases: LeaseOut[] = [];
    for (let i = 0; i < 50; i++) {
      const answer = await call<LeaseOut>(first.baseUrl, "POST", `/agents/${agent.id}/leases`, {
        duration_seconds: 5,
      });
      expect(answer.status).toBe(201);
      leases.push(answer.body);
    }
    await first.kill();
    const { prisma } = database().db;
    expect(await prisma.task.count({ where: { agentId: agent.id, status: "running", leaseId: { not: null } } })).toBe(
      50,
    );

    const second = await start();
    const ready = Date.now();
    const lastExpiry = Math.max(...leases.map((lease) => Date.parse(lease.expires_at)));
    const unsettled = () => prisma.task.count({ where: { agentId: agent.id, status: "running" } });
    expect(await eventually(unsettled, (n) => n === 0, Math.max(lastExpiry, ready) - Date.now() + 10_000)).toBe(0);
    const settledBy = Date.now();
    expect(settledBy - Math.max(lastExpiry, ready)).toBeLessThanOrEqual(2_000 + 500);

    const tasks = await prisma.task.findMany({ where: { agentId: agent.id } });
    const byId = new Map(tasks.map((task) => [task.id, task]));
    for (const task of single) {
      expect(byId.get(task.id)).toMatchObject({ status: "failed", attempts: 1, leaseId: null });
      expect(JSON.parse(byId.get(task.id)?.error ?? "null")).toEqual(expired);
    }
    for (const task of twice)
      expect(byId.get(task.id)).toMatchObject({ status: "pending", attempts: 1, leaseId: null });
    const expiries = await prisma.event.groupBy({
      by: ["taskId"],
      where: { agentId: agent.id, type: "task.lease_expired" },
      _count: true,
    });
    expect(expiries).toHaveLength(50);
    expect(expiries.every((group) => group._count === 1)).toBe(true);
    await second.kill();
  }, 120_000);
});
