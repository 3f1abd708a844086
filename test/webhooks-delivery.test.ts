import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readEvents } from "../src/events/read.js";
import { eventTypes } from "../src/events/types.js";
import type { TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.js";
import { createWebhook, startWebhookApp, waitForDeliveries } from "./helpers/webhooks.js";

let app: TestApp;
const receivers: Receiver[] = [];
beforeAll(async () => {
  app = await startWebhookApp({ WEBHOOK_RETRY_SCHEDULE: "0.3,0.3", TASK_RETRY_BASE_SECONDS: "0" });
});
afterAll(() => app.close());
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  receivers.push(started);
  return started;
}

const call = async (method: string, path: string, json?: unknown) => {
  const res = await app.request(path, { method, json });
  return { status: res.status, body: (res.status === 204 ? undefined : await res.json()) as { id: string } };
};

describe("delivery", () => {
  it("delivers each event type, signed, with the Standard Webhooks body and headers", async () => {
    const hook = await receiver();
    const webhook = await createWebhook(app, { url: hook.url, types: ["*"] });
    hook.secrets.push(webhook.secret);

    const agent = await createAgent(app);
    await call("PATCH", `/agents/${agent.id}`, { status: "running" });
    const task = await createTask(app, agent.id, { max_attempts: 3 });
    await call("PATCH", `/agents/${agent.id}/tasks/${task.id}`, { title: "renamed" });
    const first = await call("POST", `/agents/${agent.id}/leases`, { duration_seconds: 5 });
    expect(first.status).toBe(201);
    const failed = await call("PATCH", `/agents/${agent.id}/tasks/${task.id}`, {
      lease_id: first.body.id,
      status: "failed",
    });
    expect(failed.status).toBe(200);
    const second = await call("POST", `/agents/${agent.id}/leases`, { duration_seconds: 5 });
    expect(second.status).toBe(201);
    expect((await call("PATCH", `/agents/${agent.id}/tasks/${task.id}`, { status: "cancelled" })).status).toBe(202);
    // The settler ends the lease when it expires (5 s): task.lease_expired.
    await hook.waitFor(9, 15_000);
    expect((await call("DELETE", `/agents/${agent.id}`)).status).toBe(204);

    const received = await hook.waitFor(11);
    const events = await readEvents(app.database.db, { agentId: agent.id, limit: 100 });
    expect([...new Set(events.map((event) => event.type))].sort()).toEqual([...eventTypes].sort());
    expect(received.map((request) => request.headers["webhook-id"])).toEqual(events.map((event) => String(event.id)));
    for (const [i, request] of received.entries()) {
      const event = events[i];
      if (!event) throw new Error("an event is missing");
      expect(request.verifiedBy).toEqual([0]);
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(Math.abs(Number(request.headers["webhook-timestamp"]) * 1000 - request.at)).toBeLessThan(5_000);
      expect(JSON.parse(request.body)).toEqual({
        type: event.type,
        timestamp: event.occurred_at,
        data: {
          id: String(event.id),
          type: event.type,
          occurred_at: event.occurred_at,
          agent_id: agent.id,
          task_id: event.task_id,
          data: JSON.parse(event.data),
        },
      });
    }
    const deliveries = await waitForDeliveries(app, webhook.id, (list) => list.every((d) => d.status === "succeeded"));
    expect(deliveries).toHaveLength(11);
    expect(deliveries[0]).toMatchObject({
      webhook_id: webhook.id,
      status: "succeeded",
      attempts: 1,
      next_attempt_at: null,
      last_status_code: 200,
      last_error: null,
    });
  });
});
