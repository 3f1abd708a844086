import { afterEach, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase, testProvider } from "./helpers/databases.js";
import { call, type ServiceProcess, startService } from "./helpers/service.js";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.js";
import { secretsKey } from "./helpers/webhooks.js";

// Webhook delivery in real service processes: killed with SIGKILL mid-delivery, and two instances
// sharing one PostgreSQL database.
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase(inject("templateDatabase"));
  cleanups.push(db.drop);
  return db;
}

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  cleanups.push(started.close);
  return started;
}

async function service(url: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const started = await startService({
    DATABASE_URL: url,
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_SECRETS_KEY: secretsKey,
    MAX_EVENT_LOOP_DELAY_MS: "60000",
    ...env,
  });
  cleanups.push(started.kill);
  return started;
}

async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

const eventIdsOf = async (db: TestDatabase) =>
  (await db.db.prisma.event.findMany({ where: { type: "agent.created" }, orderBy: { id: "asc" } })).map((event) =>
    String(event.id),
  );

async function waitUntil(what: string, done: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("webhook delivery across processes", () => {
  it("delivers after a restart what was pending when the service was killed with SIGKILL", async () => {
    const db = await database();
    const hook = await receiver();
    // Slow answers, one at a time: most deliveries are still pending (one in flight) at the kill.
    hook.answer = () => ({ status: 200, delayMs: 1_000 });
    const settings = { WEBHOOK_TIMEOUT_SECONDS: "2" };
    const first = await service(db.url, { ...settings, WEBHOOK_CONCURRENCY_PER_ENDPOINT: "1" });
    const created = await call<{ id: string; secret: string }>(first.baseUrl, "POST", "/webhooks", {
      url: hook.url,
      types: ["agent.created"],
    });
    expect(created.status).toBe(201);
    hook.secrets.push(created.body.secret);
    for (let i = 0; i < 20; i++) {
      expect((await call(first.baseUrl, "POST", "/agents", { name: `a${i}`, type: "worker" })).status).toBe(201);
    }
    await hook.waitFor(2);
    await first.kill();
    const pending = await db.db.prisma.delivery.count({ where: { status: "pending" } });
    expect(pending).toBeGreaterThanOrEqual(5);
    hook.answer = () => ({ status: 200 });

    const second = await service(db.url, settings);
    const expected = await eventIdsOf(db);
    expect(expected).toHaveLength(20);
    // Claims of the killed process run out after 2 × 2 s + 5 s; then those deliveries are due again.
    await waitUntil(
      "every event to arrive",
      () => expected.every((id) => hook.received.some((request) => request.headers["webhook-id"] === id)),
      90_000,
    );
    expect(hook.received.every((request) => request.verifiedBy.length === 1)).toBe(true);
    await waitUntil(
      "every delivery to succeed",
      async () => (await db.db.prisma.delivery.count({ where: { status: "succeeded" } })) === 20,
      15_000,
    );
    await second.kill();
  }, 240_000);

  it.runIf(testProvider === "postgresql")(
    "two instances deliver 1,000 events to one endpoint: none missing, none twice at once",
    async () => {
      const db = await database();
      const hook = await receiver();
      const open = new Map<string, number>();
      let concurrentDuplicates = 0;
      hook.answer = (request) => {
        const id = String(request.headers["webhook-id"]);
        const now = (open.get(id) ?? 0) + 1;
        if (now > 1) concurrentDuplicates++;
        open.set(id, now);
        setTimeout(() => open.set(id, (open.get(id) ?? 1) - 1), 20).unref();
        return { status: 200, delayMs: 20 };
      };
      const [a, b] = [await service(db.url), await service(db.url)];
      const created = await call<{ id: string; secret: string }>(a.baseUrl, "POST", "/webhooks", {
        url: hook.url,
        types: ["agent.created"],
      });
      hook.secrets.push(created.body.secret);
      const indexes = [...Array(1000).keys()];
      await pool(indexes, 16, async (i) => {
        const target = i % 2 === 0 ? a : b;
        const res = await call(target.baseUrl, "POST", "/agents", { name: `a${i}`, type: "worker" });
        expect(res.status).toBe(201);
      });
      const expected = await eventIdsOf(db);
      expect(expected).toHaveLength(1000);
      await waitUntil(
        "every delivery to succeed",
        async () => (await db.db.prisma.delivery.count({ where: { status: "succeeded" } })) === 1000,
        120_000,
      );
      const received = hook.received.map((request) => String(request.headers["webhook-id"]));
      expect(new Set(received)).toEqual(new Set(expected));
      expect(hook.received.every((request) => request.verifiedBy.length === 1)).toBe(true);
      expect(concurrentDuplicates).toBe(0);
      // A second request for an event comes only from a recorded retry.
      const attempts = await db.db.prisma.deliveryAttempt.count();
      expect(received.length).toBe(attempts);
      expect(await db.db.prisma.delivery.count()).toBe(1000);
    },
    240_000,
  );
});
