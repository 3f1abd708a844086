import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readEvents } from "../src/modules/events/sql.js";
import { eventTypes } from "../src/modules/events/types.js";
import { generateSecret } from "../src/modules/webhooks/secrets.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { createSecretsCipher } from "../src/secrets/cipher.js";
import type { TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.js";
import { createWebhook, logHeadPassedRecorded, startWebhookApp, waitForDeliveries } from "./helpers/webhooks.js";

let app: TestApp;
const receivers: Receiver[] = [];
beforeAll(async () => {
  app = await startWebhookApp({
    WEBHOOK_RETRY_SCHEDULE: "0.3,0.3",
    WEBHOOK_TIMEOUT_SECONDS: "2",
    TASK_RETRY_BASE_SECONDS: "0",
  });
});
afterAll(() => app.close());
afterEach(async () => {
  // Each test's webhooks go with it, so later events reach only the next test's receivers.
  const webhooks = (await (await app.request("/webhooks?limit=1000")).json()) as { id: string }[];
  for (const webhook of webhooks) await app.request(`/webhooks/${webhook.id}`, { method: "DELETE" });
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
    const schedule = await call("POST", `/agents/${agent.id}/schedules`, {
      every_seconds: 3600,
      task: { title: "hourly" },
    });
    expect(schedule.status).toBe(201);
    const paused = await call("PATCH", `/agents/${agent.id}/schedules/${schedule.body.id}`, { paused: true });
    expect(paused.status).toBe(200);
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
    await hook.waitFor(11, 15_000);
    // A task's end: failed through its lease (its last attempt), succeeded through its lease, cancelled while pending.
    const finish = async (status: string, maxAttempts: number) => {
      const finished = await createTask(app, agent.id, { max_attempts: maxAttempts });
      const lease = await call("POST", `/agents/${agent.id}/leases`, { duration_seconds: 5 });
      expect(lease.body).toMatchObject({ task_id: finished.id });
      const patch = { lease_id: lease.body.id, status };
      expect((await call("PATCH", `/agents/${agent.id}/tasks/${finished.id}`, patch)).status).toBe(200);
    };
    await finish("failed", 1);
    await finish("succeeded", 1);
    const pending = await createTask(app, agent.id);
    expect((await call("PATCH", `/agents/${agent.id}/tasks/${pending.id}`, { status: "cancelled" })).status).toBe(200);
    expect((await call("DELETE", `/agents/${agent.id}`)).status).toBe(204);

    // Attempts to one endpoint run several at a time (WEBHOOK_CONCURRENCY_PER_ENDPOINT), so they may
    // arrive out of the log's order: each event exactly once is what is checked, in the log's order.
    const received = (await hook.waitFor(25)).sort((x, y) =>
      Number(BigInt(String(x.headers["webhook-id"])) - BigInt(String(y.headers["webhook-id"]))),
    );
    const events = await readEvents(app.database.db, { projectId: defaultProjectId, agentId: agent.id, limit: 100 });
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
    expect(deliveries).toHaveLength(25);
    expect(deliveries[0]).toMatchObject({
      webhook_id: webhook.id,
      status: "succeeded",
      attempts: 1,
      next_attempt_at: null,
      last_status_code: 200,
      last_error: null,
    });
  });

  it("delivers only the types and the agent a webhook asks for", async () => {
    const [tasksOfOne, agentsCreated] = [await receiver(), await receiver()];
    const watched = await createAgent(app);
    const other = await createAgent(app);
    await logHeadPassedRecorded(app);
    await createWebhook(app, { url: tasksOfOne.url, types: ["task.*"], agent_id: watched.id });
    await createWebhook(app, { url: agentsCreated.url, types: ["agent.created"] });

    const third = await createAgent(app);
    const task = await createTask(app, watched.id);
    await createTask(app, other.id);
    await call("PATCH", `/agents/${watched.id}/tasks/${task.id}`, { title: "again" });
    await call("PATCH", `/agents/${watched.id}`, { name: "renamed" });
    const last = await createAgent(app);

    const types = (requests: { body: string }[]) =>
      requests.map((request) => {
        const body = JSON.parse(request.body) as { type: string; data: { agent_id: string } };
        return `${body.type} ${body.data.agent_id}`;
      });
    expect(types(await agentsCreated.waitFor(2))).toEqual([`agent.created ${third.id}`, `agent.created ${last.id}`]);
    expect(types(await tasksOfOne.waitFor(2))).toEqual([`task.created ${watched.id}`, `task.updated ${watched.id}`]);
    // Nothing more arrives: a later event of each receiver's kind would come after these.
    await createAgent(app);
    await agentsCreated.waitFor(3);
    expect(tasksOfOne.received).toHaveLength(2);
  });

  it("signs with both secrets during a rotation's overlap, and with the new one only after it", async () => {
    const hook = await receiver();
    const webhook = await createWebhook(app, { url: hook.url, types: ["agent.created"] });
    hook.secrets.push(webhook.secret);
    const rotated = await app.request(`/webhooks/${webhook.id}/secrets`, { method: "POST" });
    expect(rotated.status).toBe(201);
    const { secret } = (await rotated.json()) as { secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(webhook.secret);
    hook.secrets.push(secret);

    await createAgent(app);
    const [during] = await hook.waitFor(1);
    expect(during?.verifiedBy).toEqual([0, 1]);
    expect(String(during?.headers["webhook-signature"]).split(" ")).toHaveLength(2);

    // 24 hours later (the old secret's expiry moved to the past): the new secret alone signs.
    const expiresAt = await app.database.db.prisma.webhookSecret.findMany({ where: { webhookId: webhook.id } });
    expect(expiresAt.filter((row) => row.expiresAt !== null)).toHaveLength(1);
    const overlapEnd = expiresAt.find((row) => row.expiresAt)?.expiresAt?.getTime() ?? 0;
    expect(Math.abs(overlapEnd - (Date.now() + 24 * 3_600_000))).toBeLessThan(60_000);
    await app.database.db.prisma.webhookSecret.updateMany({
      where: { webhookId: webhook.id, expiresAt: { not: null } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    await createAgent(app);
    const [, after] = await hook.waitFor(2);
    expect(after?.verifiedBy).toEqual([1]);
    expect(String(after?.headers["webhook-signature"]).split(" ")).toHaveLength(1);
  });

  it("retries a 500 on the schedule; the delivery log shows both attempts", async () => {
    const hook = await receiver();
    hook.answer = (_request, index) => ({ status: index === 0 ? 500 : 200 });
    const webhook = await createWebhook(app, { url: hook.url, types: ["agent.created"] });
    hook.secrets.push(webhook.secret);
    await createAgent(app);
    const [first, second] = await hook.waitFor(2);
    expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
    expect(second?.verifiedBy).toEqual([0]);
    // WEBHOOK_RETRY_SCHEDULE=0.3: the retry comes 0.3 s after the failure.
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(250);
    const [delivery] = await waitForDeliveries(app, webhook.id, (list) => list[0]?.status === "succeeded");
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 2, last_status_code: 200, next_attempt_at: null });
    const attempts = await app.database.db.prisma.deliveryAttempt.findMany({
      where: { deliveryId: delivery?.id },
      orderBy: { attemptedAt: "asc" },
    });
    expect(attempts.map((attempt) => [attempt.statusCode, attempt.error])).toEqual([
      [500, null],
      [200, null],
    ]);
  });

  it("a receiver that does not answer within the timeout fails the attempt; the retry succeeds", async () => {
    const hook = await receiver();
    hook.answer = (_request, index) => ({ status: 200, delayMs: index === 0 ? 5_000 : 0 });
    const webhook = await createWebhook(app, { url: hook.url, types: ["agent.created"] });
    await createAgent(app);
    const [delivery] = await waitForDeliveries(app, webhook.id, (list) => list[0]?.status === "succeeded");
    expect(delivery).toMatchObject({ attempts: 2, last_status_code: 200 });
    const attempts = await app.database.db.prisma.deliveryAttempt.findMany({
      where: { deliveryId: delivery?.id },
      orderBy: { attemptedAt: "asc" },
    });
    expect(attempts[0]).toMatchObject({ statusCode: null, error: "no answer within 2000 ms" });
    expect(attempts[0]?.durationMs).toBeGreaterThanOrEqual(1_900);
    expect(attempts[0]?.durationMs).toBeLessThan(4_000);
  });

  it("gives up after the last retry: failed, with the last error", async () => {
    const hook = await receiver();
    hook.answer = () => ({ status: 503 });
    const webhook = await createWebhook(app, { url: hook.url, types: ["agent.created"] });
    await createAgent(app);
    const [delivery] = await waitForDeliveries(app, webhook.id, (list) => list[0]?.status === "failed");
    expect(delivery).toMatchObject({ attempts: 3, last_status_code: 503, next_attempt_at: null });
    expect(hook.received).toHaveLength(3);
  });

  it("a secret that cannot be decrypted fails the attempt, and the error line says why", async () => {
    const hook = await receiver();
    const webhook = await createWebhook(app, { url: hook.url, types: ["agent.created"] });
    // As if WEBHOOK_SECRETS_KEY had changed since the secret was stored.
    const otherKey = createSecretsCipher("another key material, 32 bytes or more");
    await app.database.db.prisma.webhookSecret.updateMany({
      where: { webhookId: webhook.id },
      data: { secret: otherKey.encrypt(generateSecret(), webhook.id) },
    });
    await createAgent(app);
    const [delivery] = await waitForDeliveries(app, webhook.id, (list) => list[0]?.status === "failed");
    expect(delivery).toMatchObject({
      attempts: 3,
      last_status_code: null,
      last_error: "the webhook's secret cannot be used (see the service's log)",
    });
    expect(hook.received).toEqual([]);
    const reason = "The webhook secret was encrypted with another key (was WEBHOOK_SECRETS_KEY changed?)";
    const errors = app.logs.filter((line) => line.level === "error" && line.webhook_id === webhook.id);
    expect(errors).toHaveLength(3);
    for (const line of errors) {
      expect(line).toMatchObject({ msg: `webhook secrets cannot be used: ${reason}`, reason });
    }
  });

  it("POST …/deliveries sends an event again now, as a new delivery", async () => {
    const hook = await receiver();
    const webhook = await createWebhook(app, { url: hook.url, types: ["agent.created"] });
    hook.secrets.push(webhook.secret);
    await createAgent(app);
    const [original] = await hook.waitFor(1);
    const eventId = String(original?.headers["webhook-id"]);
    const [first] = await waitForDeliveries(app, webhook.id, (list) => list[0]?.status === "succeeded");

    const res = await app.request(`/webhooks/${webhook.id}/deliveries`, {
      method: "POST",
      json: { event_id: eventId },
    });
    expect(res.status).toBe(201);
    const redelivery = (await res.json()) as { id: string };
    expect(redelivery).toMatchObject({ webhook_id: webhook.id, event_id: eventId, status: "pending", attempts: 0 });
    expect(redelivery.id).not.toBe(first?.id);
    const [, again] = await hook.waitFor(2);
    expect(again?.headers["webhook-id"]).toBe(eventId);
    expect(again?.verifiedBy).toEqual([0]);
    expect(JSON.parse(again?.body ?? "")).toEqual(JSON.parse(original?.body ?? ""));
    const log = await waitForDeliveries(app, webhook.id, (list) => list.every((d) => d.status === "succeeded"));
    expect(log.map((delivery) => delivery.id)).toEqual([redelivery.id, first?.id]);
  });
});

describe("auto-disable", () => {
  it("disables an endpoint whose deliveries all failed for WEBHOOK_DISABLE_AFTER_HOURS; enabling it resumes them", async () => {
    // 0.0005 hours: 1.8 s of nothing but failures.
    const failing = await startWebhookApp({
      WEBHOOK_RETRY_SCHEDULE: Array(30).fill("0.2").join(","),
      WEBHOOK_DISABLE_AFTER_HOURS: "0.0005",
    });
    const hook = await receiver();
    try {
      hook.answer = () => ({ status: 500 });
      const webhook = await createWebhook(failing, { url: hook.url, types: ["agent.created"] });
      await createAgent(failing);
      const deadline = Date.now() + 15_000;
      let current = webhook as { enabled: boolean; disabled_reason: string | null };
      while (current.enabled && Date.now() < deadline) {
        await sleep(100);
        current = (await (await failing.request(`/webhooks/${webhook.id}`)).json()) as typeof current;
      }
      expect(current.enabled).toBe(false);
      expect(current.disabled_reason).toMatch(/^Every delivery failed for 0\.0005 hours/);
      const [paused] = await waitForDeliveries(failing, webhook.id, (list) => list[0]?.next_attempt_at === null);
      expect(paused).toMatchObject({ status: "pending", last_status_code: 500 });
      expect(paused?.attempts).toBeGreaterThanOrEqual(2);
      const requests = hook.received.length;
      await sleep(600);
      expect(hook.received).toHaveLength(requests);
      const logs = JSON.stringify(failing.logs);
      expect(logs).toContain("webhook disabled");
      expect(logs).not.toContain(webhook.secret.slice("whsec_".length));

      hook.answer = () => ({ status: 200 });
      const enabled = await failing.request(`/webhooks/${webhook.id}`, { method: "PATCH", json: { enabled: true } });
      expect(await enabled.json()).toMatchObject({ enabled: true, disabled_reason: null });
      const [done] = await waitForDeliveries(failing, webhook.id, (list) => list[0]?.status === "succeeded");
      expect(done?.last_status_code).toBe(200);
    } finally {
      await failing.close();
    }
  });
});
