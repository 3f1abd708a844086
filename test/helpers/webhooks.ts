import { Writable } from "node:stream";
import { expect } from "vitest";
import { loadConfig } from "../../src/config.js";
import { statement } from "../../src/db/index.js";
import { createLogger } from "../../src/logger.js";
import { eventLogHead } from "../../src/modules/events/sql.js";
import { startWebhookDelivery, type WebhookDelivery } from "../../src/modules/webhooks/delivery/start.js";
import type { DeliveryOut, WebhookOut } from "../../src/modules/webhooks/schemas.js";
import { startTestApp, type TestApp } from "./app.js";

export const secretsKey = "test-webhook-secrets-key-of-32-bytes-or-more";

export interface WebhookApp extends TestApp {
  /** Starts webhook delivery in this process, as the service does when it starts (once; later calls do nothing). */
  startDelivery: () => void;
}

/**
 * The app on its own database, with webhook delivery running as in the service; private addresses allowed.
 * With `delivering: false`, delivery waits for `startDelivery()`: as if every instance's feeder were down.
 */
export async function startWebhookApp(
  env: Record<string, string> = {},
  { delivering = true }: { delivering?: boolean } = {},
): Promise<WebhookApp> {
  // Load shedding is not under test here, and the machine may be busy: a slow event loop must not turn into 503s.
  const settings = {
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_SECRETS_KEY: secretsKey,
    MAX_EVENT_LOOP_DELAY_MS: "60000",
    MAX_QUEUE_MS: "10000",
    ...env,
  };
  const app = await startTestApp(settings);
  const config = loadConfig({ SEED_SAMPLE_DATA: "false", ...settings, DATABASE_URL: app.database.url });
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split("\n").filter(Boolean)) app.logs.push(JSON.parse(line));
      callback();
    },
  });
  let delivery: WebhookDelivery | undefined;
  const startDelivery = () => {
    delivery ??= startWebhookDelivery({ db: app.database.db, config, logger: createLogger("debug", sink) });
  };
  if (delivering) startDelivery();
  return {
    ...app,
    startDelivery,
    close: async () => {
      await delivery?.stop();
      await app.close();
    },
  };
}

const newestEvent = statement<{ id: bigint | number | null }>(
  "test_webhooks_newest",
  "SELECT MAX(id) AS id FROM events",
);

/**
 * Waits until the log's head (where a new webhook starts) has passed every
 * event recorded so far, so a webhook created next gets none of them. On
 * PostgreSQL the head may lag behind events just committed while a running
 * transaction it cannot place is open (src/modules/events/sql.ts), and a webhook
 * created then may also get those, as "at least once" allows.
 */
export async function logHeadPassedRecorded(app: TestApp): Promise<void> {
  const db = app.database.db;
  const newest = BigInt((await db.get(newestEvent, []))?.id ?? 0);
  const deadline = Date.now() + 5000;
  while ((await eventLogHead(db)) < newest) {
    if (Date.now() > deadline) throw new Error("the event log's head did not pass the recorded events within 5 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export type CreatedWebhook = WebhookOut & { secret: string };

export async function createWebhook(app: TestApp, body: Record<string, unknown>): Promise<CreatedWebhook> {
  const res = await app.request("/webhooks", { method: "POST", json: { types: ["*"], ...body } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as CreatedWebhook;
}

export async function deliveriesOf(app: TestApp, webhookId: string, query = ""): Promise<DeliveryOut[]> {
  const res = await app.request(`/webhooks/${webhookId}/deliveries${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as DeliveryOut[];
}

/** Polls the delivery log until `done` holds for it. */
export async function waitForDeliveries(
  app: TestApp,
  webhookId: string,
  done: (deliveries: DeliveryOut[]) => boolean,
  timeoutMs = 15_000,
): Promise<DeliveryOut[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const deliveries = await deliveriesOf(app, webhookId, "?limit=1000");
    if (done(deliveries)) return deliveries;
    if (Date.now() > deadline) throw new Error(`delivery log not as expected: ${JSON.stringify(deliveries)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
