import { createTRPCClient, httpLink } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRouter } from "../src/modules/index.js";
import type { LeaseOut } from "../src/modules/leases/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTask } from "./helpers/factories.js";
import { eventLog, getTask, leasePath, runningAgent, send, takeLease, taskPath } from "./helpers/leases.js";

// docs/api/leases.md: cancellation that tells the truth.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ TASK_RETRY_BASE_SECONDS: "0.25" });
});
afterAll(() => app.close());

const cancel = { status: "cancelled" };

async function leased(taskBody: Record<string, unknown> = {}) {
  const agent = await runningAgent(app);
  const task = await createTask(app, agent.id, taskBody);
  const lease = await takeLease(app, agent.id);
  return { agent, task, lease, events: await eventLog(app, agent.id) };
}

describe("cancelling a task that is not leased", () => {
  it("pending, or running without a lease: 200, cancelled, as in docs/api/tasks.md", async () => {
    const agent = await runningAgent(app);
    const pending = await createTask(app, agent.id);
    const running = await createTask(app, agent.id);
    expect((await send(app, "PATCH", taskPath(running), { status: "running" })).status).toBe(200);
    for (const task of [pending, running]) {
      const answer = await send<TaskOut>(app, "PATCH", taskPath(task), cancel);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ status: "cancelled", cancel_requested: false, lease: null });
    }
  });
});

describe("cancelling a leased task", () => {
  it("is 202: only cancel_requested changes (and version); the renewal tells the worker; it acknowledges: task.cancelled", async () => {
    const { agent, lease, events } = await leased();
    const answer = await send<TaskOut>(app, "PATCH", taskPath(lease.task), cancel);
    expect(answer.status).toBe(202);
    expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const asked = answer.body;
    expect(asked).toEqual({ ...lease.task, cancel_requested: true, updated_at: asked.updated_at, version: 3 });
    expect(await getTask(app, lease.task)).toEqual(asked);

    // Asking again changes nothing, and is 202 all the same.
    const again = await send<TaskOut>(app, "PATCH", taskPath(lease.task), cancel);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(asked);

    const renewed = await send<LeaseOut>(app, "PATCH", leasePath(agent.id, lease.id), {});
    expect(renewed.status).toBe(200);
    expect(renewed.body.task).toMatchObject({ status: "running", cancel_requested: true });
    // The renewal is not a change of the task: the version and updated_at the cancellation gave it.
    expect(renewed.body.task).toEqual({
      ...asked,
      lease: { ...lease.task.lease, expires_at: renewed.body.expires_at },
    });
    const got = await send<LeaseOut>(app, "GET", leasePath(agent.id, lease.id));
    expect(got.body.task.cancel_requested).toBe(true);

    const acknowledged = await send<TaskOut>(app, "PATCH", taskPath(lease.task), { lease_id: lease.id, ...cancel });
    expect(acknowledged.status).toBe(200);
    expect(acknowledged.body).toEqual({
      ...renewed.body.task,
      status: "cancelled",
      lease: null,
      updated_at: acknowledged.body.updated_at,
      version: 4,
    });
    expect(await events()).toEqual([
      {
        type: "task.cancel_requested",
        occurred_at: asked.updated_at,
        task_id: lease.task_id,
        data: { task: asked, changes: { cancel_requested: [false, true] } },
      },
      {
        type: "task.cancelled",
        occurred_at: acknowledged.body.updated_at,
        task_id: lease.task_id,
        data: {
          task: acknowledged.body,
          changes: { status: ["running", "cancelled"], lease: [renewed.body.task.lease, null] },
        },
      },
    ]);
    expect((await send(app, "GET", leasePath(agent.id, lease.id))).status).toBe(404);
    // Final now: a cancellation asked again is the task table's no-op.
    expect((await send(app, "PATCH", taskPath(lease.task), cancel)).status).toBe(200);
  });

  it("released while its cancellation is asked for: cancelled, not pending", async () => {
    const { agent, lease, events } = await leased({ max_attempts: 3 });
    const asked = await send<TaskOut>(app, "PATCH", taskPath(lease.task), cancel);
    expect(asked.status).toBe(202);
    expect((await send(app, "DELETE", leasePath(agent.id, lease.id))).status).toBe(204);
    const cancelled = await getTask(app, lease.task);
    expect(cancelled).toEqual({
      ...asked.body,
      status: "cancelled",
      lease: null,
      updated_at: cancelled.updated_at,
      version: asked.body.version + 1,
    });
    expect((await events()).at(-1)).toEqual({
      type: "task.cancelled",
      occurred_at: cancelled.updated_at,
      task_id: lease.task_id,
      data: { task: cancelled, changes: { status: ["running", "cancelled"], lease: [lease.task.lease, null] } },
    });
    expect((await send(app, "POST", leasePath(agent.id), {})).status).toBe(204);
  });

  it("a failure reported while its cancellation is asked for is not retried", async () => {
    const { lease } = await leased({ max_attempts: 3 });
    expect((await send(app, "PATCH", taskPath(lease.task), cancel)).status).toBe(202);
    const failed = await send<TaskOut>(app, "PATCH", taskPath(lease.task), { lease_id: lease.id, status: "failed" });
    expect(failed.body).toMatchObject({ status: "failed", attempts: 1, cancel_requested: true });
  });

  it("with a lease_id that is not the live one: 409 lease lost, nothing asked", async () => {
    const { lease, events } = await leased();
    const answer = await send(app, "PATCH", taskPath(lease.task), {
      lease_id: "0c3e8a2f-5b7d-4f1e-9a2c-6d8b4e0f1a37",
      ...cancel,
    });
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ details: { lease: "lost" } });
    expect(await getTask(app, lease.task)).toEqual(lease.task);
    expect(await events()).toEqual([]);
  });

  it("over tRPC the mutation returns the task: still running, cancel_requested", async () => {
    const { lease } = await leased();
    const api = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc` })] });
    const task = await api.tasks.update.mutate({
      agent_id: lease.agent_id,
      task_id: lease.task_id,
      status: "cancelled",
    });
    expect(task).toMatchObject({ id: lease.task_id, status: "running", cancel_requested: true });
  });
});
