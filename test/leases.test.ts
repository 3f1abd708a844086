import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LeaseOut } from "../src/modules/leases/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { eventLog, getTask, iso, leasePath, runningAgent, send, takeLease, taskPath, uuid } from "./helpers/leases.js";

// docs/api/leases.md: creating, reading, renewing and releasing leases, with their events.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const missingId = "00000000-0000-4000-8000-000000000000";
const seconds = (n: number) => n * 1000;
const plus = (time: string, ms: number) => new Date(Date.parse(time) + ms).toISOString();
const leaseNotFound = { detail: "Lease not found" };

describe("POST /agents/{agent_id}/leases", () => {
  it("leases the next ready task: 201, Location, the Lease, the task running", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, { title: "Crawl", input: { url: "https://example.com" } });
    const events = await eventLog(app, agent.id);
    const answer = await send<LeaseOut>(app, "POST", leasePath(agent.id), { worker: "w-1", duration_seconds: 30 });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const lease = answer.body;
    expect(answer.headers.get("location")).toBe(`/agents/${agent.id}/leases/${lease.id}`);
    const expiresAt = plus(lease.created_at, seconds(30));
    expect(lease).toEqual({
      id: expect.stringMatching(uuid),
      agent_id: agent.id,
      task_id: task.id,
      worker: "w-1",
      created_at: expect.stringMatching(iso),
      expires_at: expiresAt,
      task: {
        ...task,
        status: "running",
        updated_at: expect.stringMatching(iso),
        lease: { id: lease.id, worker: "w-1", expires_at: expiresAt },
        version: 2,
      },
    });
    expect(lease.task.updated_at >= lease.created_at).toBe(true);
    expect(await getTask(app, task)).toEqual(lease.task);
    expect(await events()).toEqual([
      {
        type: "task.leased",
        occurred_at: lease.task.updated_at,
        task_id: task.id,
        data: {
          task: lease.task,
          changes: { status: ["pending", "running"], lease: [null, lease.task.lease] },
        },
      },
    ]);
  });

  it("defaults: no worker name, 60 seconds", async () => {
    const agent = await runningAgent(app);
    await createTask(app, agent.id);
    const lease = await takeLease(app, agent.id);
    expect(lease.worker).toBeNull();
    expect(lease.expires_at).toBe(plus(lease.created_at, seconds(60)));
  });

  it("is 204 with no body when no task is ready", async () => {
    const agent = await runningAgent(app);
    const answer = await send(app, "POST", leasePath(agent.id), { wait_seconds: 0 });
    expect(answer.status).toBe(204);
    expect(answer.text).toBe("");
    expect(answer.headers.get("content-type")).toBeNull();
    expect(answer.headers.get("location")).toBeNull();
  });

  it("takes the highest priority, then the earliest run_at, then created_at, then id; never a task not yet due", async () => {
    const agent = await runningAgent(app);
    const now = Date.now();
    const at = (offset: number) => new Date(now + offset).toISOString();
    const later = await createTask(app, agent.id, { title: "run_at ahead", priority: 9, run_at: at(seconds(3600)) });
    const a = await createTask(app, agent.id, { title: "a", run_at: at(-seconds(2)) });
    const b = await createTask(app, agent.id, { title: "b", priority: 9 });
    const c = await createTask(app, agent.id, { title: "c", run_at: at(-seconds(3)) });
    const d = await createTask(app, agent.id, { title: "d", priority: 0, run_at: at(-seconds(60)) });
    // Same priority and run_at: created_at decides; with created_at equal too, id.
    const same = at(-seconds(1));
    const e1 = await createTask(app, agent.id, { title: "e1", run_at: same });
    const e2 = await createTask(app, agent.id, { title: "e2", run_at: same });
    const [f1, f2] = [
      await createTask(app, agent.id, { title: "f", priority: 0, run_at: at(-seconds(30)) }),
      await createTask(app, agent.id, { title: "f", priority: 0, run_at: at(-seconds(30)) }),
    ];
    const [first, second] = [f1, f2].sort((x, y) => (x.id < y.id ? -1 : 1)) as [TaskOut, TaskOut];
    await app.database.db.prisma.task.updateMany({
      where: { id: { in: [first.id, second.id] } },
      data: { createdAt: new Date(f1.created_at) },
    });

    const taken: string[] = [];
    for (let i = 0; i < 8; i++) taken.push((await takeLease(app, agent.id)).task_id);
    expect(taken).toEqual([b.id, c.id, a.id, e1.id, e2.id, d.id, first.id, second.id]);
    expect(e1.created_at <= e2.created_at).toBe(true);
    expect((await send(app, "POST", leasePath(agent.id), {})).status).toBe(204);
    expect((await getTask(app, later)).status).toBe("pending");
  });

  it("is 404 for a missing agent, including an id that is not a UUID", async () => {
    for (const id of [missingId, "not-a-uuid"]) {
      const answer = await send(app, "POST", leasePath(id), {});
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ detail: "Agent not found" });
    }
  });

  it("is 409 with details.agent_status for an agent that is not running, and leases nothing", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const expectRefused = async (status: string) => {
      const answer = await send(app, "POST", leasePath(agent.id), { wait_seconds: 1 });
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({
        error: "conflict",
        message: `Agent is ${status}: only a running agent gets work`,
        details: { agent_status: status },
      });
    };
    const events = await eventLog(app, agent.id);
    await expectRefused("idle");
    for (const status of ["running", "paused"]) {
      expect((await send(app, "PATCH", `/agents/${agent.id}`, { status })).status).toBe(200);
    }
    const afterPause = await events();
    await expectRefused("paused");
    expect(await getTask(app, task)).toEqual(task);
    expect(await events()).toEqual(afterPause);
    expect(afterPause.map((event) => event.type)).toEqual(["agent.updated", "agent.updated"]);
  });

  it("is 400 for bad input, and changes nothing", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id);
    const events = await eventLog(app, agent.id);
    const cases: [Record<string, unknown>, string][] = [
      [{ duration_seconds: 4 }, "duration_seconds"],
      [{ duration_seconds: 3601 }, "duration_seconds"],
      [{ duration_seconds: -60 }, "duration_seconds"],
      [{ duration_seconds: 1e12 }, "duration_seconds"],
      [{ duration_seconds: 30.5 }, "duration_seconds"],
      [{ duration_seconds: "60" }, "duration_seconds"],
      [{ duration_seconds: null }, "duration_seconds"],
      [{ wait_seconds: 21 }, "wait_seconds"],
      [{ wait_seconds: -1 }, "wait_seconds"],
      [{ wait_seconds: 0.5 }, "wait_seconds"],
      [{ wait_seconds: true }, "wait_seconds"],
      [{ worker: "" }, "worker"],
      [{ worker: "w".repeat(101) }, "worker"],
      [{ worker: 7 }, "worker"],
      [{ worker: "a\u0000b" }, "worker"],
    ];
    for (const [body, field] of cases) {
      const answer = await send<{ error: string; details: { issues: { field: string }[] } }>(
        app,
        "POST",
        leasePath(agent.id),
        body,
      );
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toBe("validation_error");
      expect(answer.body.details.issues.map((issue) => issue.field)).toEqual([field]);
    }
    expect(await getTask(app, task)).toEqual(task);
    expect(await events()).toEqual([]);
  });

  it("never outlives the task's deadline: expires_at is capped at deadline_at", async () => {
    const agent = await runningAgent(app);
    const deadline = new Date(Date.now() + seconds(30)).toISOString();
    const task = await createTask(app, agent.id, { deadline_at: deadline });
    const lease = await takeLease(app, agent.id, { duration_seconds: 3600 });
    expect(lease.task_id).toBe(task.id);
    expect(lease.expires_at).toBe(deadline);
    expect(lease.task.lease?.expires_at).toBe(deadline);
    const renewed = await send<LeaseOut>(app, "PATCH", leasePath(agent.id, lease.id), { duration_seconds: 3600 });
    expect(renewed.body.expires_at).toBe(deadline);
  });
});

describe("GET /agents/{agent_id}/leases/{lease_id}", () => {
  it("is 200 with the lease and the task as it is now", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id);
    const lease = await takeLease(app, agent.id, { worker: "reader" });
    expect((await send(app, "GET", leasePath(agent.id, lease.id))).body).toEqual(lease);
    const renamed = await send<TaskOut>(app, "PATCH", taskPath(task), { title: "renamed" });
    const now = await send<LeaseOut>(app, "GET", leasePath(agent.id, lease.id));
    expect(now.status).toBe(200);
    expect(now.body).toEqual({ ...lease, task: renamed.body });
  });

  it("is 404 Lease not found for an unknown lease, one that is not a UUID, or one under another agent", async () => {
    const agent = await runningAgent(app);
    const other = await runningAgent(app);
    await createTask(app, agent.id);
    const lease = await takeLease(app, agent.id);
    for (const path of [leasePath(agent.id, missingId), leasePath(agent.id, "x"), leasePath(other.id, lease.id)]) {
      const answer = await send(app, "GET", path);
      expect(answer.status, path).toBe(404);
      expect(answer.body).toEqual(leaseNotFound);
    }
    expect((await send(app, "GET", leasePath(missingId, lease.id))).body).toEqual({ detail: "Agent not found" });
  });

  it("is 404 once the lease was released, or its task finished, cancelled or deleted", async () => {
    const agent = await runningAgent(app);
    const tasks = [];
    for (let i = 0; i < 4; i++) tasks.push(await createTask(app, agent.id, { title: `t${i}` }));
    const leases = [];
    for (let i = 0; i < 4; i++) leases.push(await takeLease(app, agent.id));
    const [released, finished, cancelled, deleted] = leases as [LeaseOut, LeaseOut, LeaseOut, LeaseOut];
    expect((await send(app, "DELETE", leasePath(agent.id, released.id))).status).toBe(204);
    const done = { lease_id: finished.id, status: "succeeded" };
    expect((await send(app, "PATCH", taskPath(finished.task), done)).status).toBe(200);
    const stop = { lease_id: cancelled.id, status: "cancelled" };
    expect((await send(app, "PATCH", taskPath(cancelled.task), stop)).status).toBe(200);
    expect((await send(app, "DELETE", taskPath(deleted.task))).status).toBe(204);
    for (const lease of leases) {
      for (const method of ["GET", "PATCH", "DELETE"]) {
        const answer = await send(app, method, leasePath(agent.id, lease.id), method === "PATCH" ? {} : undefined);
        expect(answer.status, `${method} ${lease.task.title}`).toBe(404);
        expect(answer.body).toEqual(leaseNotFound);
      }
    }
  });
});

describe("PATCH /agents/{agent_id}/leases/{lease_id}", () => {
  it("renews: expires_at = now + duration_seconds; no new version, updated_at kept, no event", async () => {
    const agent = await runningAgent(app);
    await createTask(app, agent.id);
    const lease = await takeLease(app, agent.id, { duration_seconds: 30 });
    const events = await eventLog(app, agent.id);
    const before = Date.now();
    const answer = await send<LeaseOut>(app, "PATCH", leasePath(agent.id, lease.id), { duration_seconds: 120 });
    const after = Date.now();
    expect(answer.status).toBe(200);
    const renewed = answer.body;
    const expires = Date.parse(renewed.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + seconds(120));
    expect(expires).toBeLessThanOrEqual(after + seconds(120));
    const taskLease = { id: lease.id, worker: null, expires_at: renewed.expires_at };
    // A renewal is not a change of the task (docs/api/events.md): same version, same updated_at.
    expect(renewed).toEqual({ ...lease, expires_at: renewed.expires_at, task: { ...lease.task, lease: taskLease } });
    expect(renewed.task.version).toBe(2);
    expect(await events()).toEqual([]);
    expect((await send(app, "GET", leasePath(agent.id, lease.id))).body).toEqual(renewed);
  });

  /** Renews the lease and checks expires_at is `duration` from the moment of the renewal. */
  async function renewFor(agentId: string, leaseId: string, body: object, duration: number) {
    const before = Date.now();
    const renewed = await send<LeaseOut>(app, "PATCH", leasePath(agentId, leaseId), body);
    const after = Date.now();
    expect(renewed.status).toBe(200);
    const expires = Date.parse(renewed.body.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + seconds(duration));
    expect(expires).toBeLessThanOrEqual(after + seconds(duration));
    return renewed.body;
  }

  it("without a duration, renews for the lease's own duration", async () => {
    const agent = await runningAgent(app);
    await createTask(app, agent.id);
    const lease = await takeLease(app, agent.id, { duration_seconds: 45 });
    for (let i = 0; i < 2; i++) await renewFor(agent.id, lease.id, {}, 45);
    await renewFor(agent.id, lease.id, { duration_seconds: 600 }, 600);
    const again = await renewFor(agent.id, lease.id, {}, 600);
    expect(again.task.version).toBe(lease.task.version);
  });

  it("without a duration, renews for the lease's own duration even after the task changed mid-lease", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id);
    const lease = await takeLease(app, agent.id, { duration_seconds: 45 });
    // Long enough that the time left on the lease is no longer its duration.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await send(app, "PATCH", taskPath(task), { status: "cancelled" })).status).toBe(202);
    const renewed = await renewFor(agent.id, lease.id, {}, 45);
    expect(renewed.task.cancel_requested).toBe(true);
  });

  it("is 400 for a bad duration and 404 for a lease that is gone; neither changes anything", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id);
    const lease = await takeLease(app, agent.id);
    const events = await eventLog(app, agent.id);
    for (const duration_seconds of [4, 3601, -5, 2.5, "30", null]) {
      const answer = await send(app, "PATCH", leasePath(agent.id, lease.id), { duration_seconds });
      expect(answer.status, String(duration_seconds)).toBe(400);
    }
    for (const id of [missingId, "not-a-uuid", task.id]) {
      const answer = await send(app, "PATCH", leasePath(agent.id, id), { duration_seconds: 30 });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(leaseNotFound);
    }
    expect((await send(app, "GET", leasePath(agent.id, lease.id))).body).toEqual(lease);
    expect(await events()).toEqual([]);
  });
});

describe("DELETE /agents/{agent_id}/leases/{lease_id}", () => {
  it("gives the task back: 204, pending, run_at = now, attempts unchanged; leasable again at once", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, { max_attempts: 3 });
    const lease = await takeLease(app, agent.id);
    const events = await eventLog(app, agent.id);
    const answer = await send(app, "DELETE", leasePath(agent.id, lease.id));
    expect(answer.status).toBe(204);
    expect(answer.text).toBe("");
    const released = await getTask(app, task);
    expect(released).toEqual({
      ...task,
      status: "pending",
      updated_at: released.updated_at,
      run_at: released.updated_at,
      lease: null,
      attempts: 0,
      version: 3,
    });
    expect(released.updated_at > lease.task.updated_at).toBe(true);
    expect(await events()).toEqual([
      {
        type: "task.updated",
        occurred_at: released.updated_at,
        task_id: task.id,
        data: {
          task: released,
          changes: {
            status: ["running", "pending"],
            run_at: [task.run_at, released.run_at],
            lease: [lease.task.lease, null],
          },
        },
      },
    ]);
    expect((await send(app, "DELETE", leasePath(agent.id, lease.id))).status).toBe(404);
    const again = await takeLease(app, agent.id);
    expect(again.task_id).toBe(task.id);
    expect(again.id).not.toBe(lease.id);
  });

  it("is 404 for an unknown lease, and under another agent", async () => {
    const agent = await runningAgent(app);
    const other = await runningAgent(app);
    await createTask(app, agent.id);
    const lease = await takeLease(app, agent.id);
    for (const path of [leasePath(agent.id, missingId), leasePath(agent.id, "0"), leasePath(other.id, lease.id)]) {
      const answer = await send(app, "DELETE", path);
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(leaseNotFound);
    }
    expect((await send(app, "GET", leasePath(agent.id, lease.id))).status).toBe(200);
  });
});
