import { afterEach, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase, testProvider } from "./helpers/databases.js";
import { call, type ServiceProcess, startService } from "./helpers/service.js";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.js";
import { secretsKey } from "./helpers/webhooks.js";

// Deleting a failing endpoint while its failed attempts are being recorded and new events are being
// fed to it, on real service processes: two instances on PostgreSQL (one on SQLite, a single writer).
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const WEBHOOKS = 150;
const DELETE_EVERY_MS = 50;

interface LogLine {
  level: string;
  msg: string;
  webhook_id?: string;
  [key: string]: unknown;
}

const logOf = (service: ServiceProcess): LogLine[] =>
  service
    .output()
    .stdout.split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine);

describe("deleting a webhook whose deliveries keep failing", () => {
  it("answers 204 every time, and its deliveries end quietly", async () => {
    const db: TestDatabase = await createTestDatabase(inject("templateDatabase"));
    cleanups.push(db.drop);
    const hook: Receiver = await startReceiver();
    cleanups.push(hook.close);
    hook.answer = () => ({ status: 503 });
    const instances = testProvider === "postgresql" ? 2 : 1;
    const services: ServiceProcess[] = [];
    for (let i = 0; i < instances; i++) {
      const service = await startService({
        DATABASE_URL: db.url,
        WEBHOOK_ALLOW_PRIVATE: "true",
        WEBHOOK_SECRETS_KEY: secretsKey,
        MAX_EVENT_LOOP_DELAY_MS: "60000",
        // Every failed attempt is tried again 50 ms later, many times: failures are recorded all along.
        WEBHOOK_RETRY_SCHEDULE: Array(40).fill("0.05").join(","),
        WEBHOOK_DISABLE_AFTER_HOURS: "0",
        WEBHOOK_MAX_ATTEMPTS_PER_SECOND: "0",
        WEBHOOK_CONCURRENCY: "100",
      });
      cleanups.push(service.kill);
      services.push(service);
    }
    const on = (i: number) => services[i % services.length] as ServiceProcess;

    const ids: string[] = [];
    for (let i = 0; i < WEBHOOKS; i++) {
      const created = await call<{ id: string }>(on(i).baseUrl, "POST", "/webhooks", {
        url: hook.url,
        types: ["agent.created"],
      });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }

    // New events all along, from every instance: each is fed to every webhook still there.
    let producing = true;
    const producers = services.map(async (service, n) => {
      for (let i = 0; producing; i++) {
        const res = await call(service.baseUrl, "POST", "/agents", { name: `a${n}-${i}`, type: "worker" });
        expect(res.status).toBe(201);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    await hook.waitFor(2 * WEBHOOKS, 60_000);

    const deletes: Promise<number>[] = [];
    for (const [i, id] of ids.entries()) {
      deletes.push(call(on(i).baseUrl, "DELETE", `/webhooks/${id}`).then((res) => res.status));
      await new Promise((resolve) => setTimeout(resolve, DELETE_EVERY_MS));
    }
    const statuses = await Promise.all(deletes);
    producing = false;
    await Promise.all(producers);

    expect(statuses.filter((status) => status !== 204)).toEqual([]);
    expect(statuses).toHaveLength(WEBHOOKS);
    expect(await db.db.prisma.webhook.count()).toBe(0);
    expect(await db.db.prisma.delivery.count()).toBe(0);
    expect(await db.db.prisma.deliveryAttempt.count()).toBe(0);

    // What is still in flight ends; then the logs are complete.
    const received = () => hook.received.length;
    let before = -1;
    while (before !== received()) {
      before = received();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const lines = services.flatMap(logOf);
    expect(lines.filter((line) => line.level === "error" || line.level === "fatal")).toEqual([]);
    expect(lines.filter((line) => line.level === "warn")).toEqual([]);
    const deleted = new Set(ids);
    const ended = lines.filter((line) => line.msg.startsWith("webhook deleted"));
    expect(ended.length).toBeGreaterThan(0);
    expect(ended.every((line) => line.level === "info" && deleted.has(line.webhook_id as string))).toBe(true);
  }, 240_000);
});
