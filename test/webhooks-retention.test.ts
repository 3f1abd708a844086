import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { purgeEvents } from "../src/modules/events/purge.js";
import { feedCursor } from "../src/modules/webhooks/sql.js";
import { testProvider } from "./helpers/databases.js";
import { createAgent } from "./helpers/factories.js";
import { startReceiver } from "./helpers/webhook-receiver.js";
import { createWebhook, startWebhookApp, type WebhookApp, waitForDeliveries } from "./helpers/webhooks.js";

const keptIds = async (app: WebhookApp) =>
  (await app.database.db.prisma.event.findMany({ select: { id: true }, orderBy: { id: "asc" } })).map((event) =>
    String(event.id),
  );
const feedPosition = async (app: WebhookApp) =>
  (await app.database.db.prisma.outboxCursor.findUnique({ where: { name: feedCursor } }))?.position;

/** `count` agents created over HTTP, then a cutoff after their events: each of them is past its retention. */
async function expiredEvents(app: WebhookApp, count: number): Promise<{ ids: string[]; cutoff: Date }> {
  for (let i = 0; i < count; i++) await createAgent(app);
  const ids = await keptIds(app);
  expect(ids).toHaveLength(count);
  await sleep(10);
  return { ids, cutoff: new Date() };
}

describe(`the retention purge and the webhook feeder on ${testProvider}`, () => {
  it("keeps expired events the feeder has not read while a webhook is enabled; they are delivered, then purged", async () => {
    // No feeder runs until startDelivery: as if every instance were down longer than the retention.
    const app = await startWebhookApp({}, { delivering: false });
    const hook = await startReceiver();
    try {
      const webhook = await createWebhook(app, { url: hook.url, types: ["agent.created"] });
      const { ids, cutoff } = await expiredEvents(app, 3);

      expect(await purgeEvents(app.database.db, cutoff)).toBe(0);
      expect(await keptIds(app)).toEqual(ids);

      app.startDelivery();
      const received = await hook.waitFor(3);
      expect(received.map((request) => String(request.headers["webhook-id"])).sort()).toEqual([...ids].sort());
      // Fed and sent: nothing holds them any more.
      await waitForDeliveries(
        app,
        webhook.id,
        (list) => list.length === 3 && list.every((d) => d.status === "succeeded"),
      );
      expect(await feedPosition(app)).toBe(BigInt(ids.at(-1) as string));
      expect(await purgeEvents(app.database.db, cutoff)).toBe(3);
      expect(await keptIds(app)).toEqual([]);
    } finally {
      await hook.close();
      await app.close();
    }
  });

  it("with no webhook enabled the feeder drops its cursor, and age alone decides", async () => {
    const app = await startWebhookApp({}, { delivering: false });
    const hook = await startReceiver();
    try {
      const webhook = await createWebhook(app, { url: hook.url, types: ["*"] });
      const disabled = await app.request(`/webhooks/${webhook.id}`, { method: "PATCH", json: { enabled: false } });
      expect(disabled.status).toBe(200);
      const { ids, cutoff } = await expiredEvents(app, 2);
      // The cursor is left until the feeder's next round, which every new event starts.
      expect(await feedPosition(app)).toBeDefined();
      expect(await purgeEvents(app.database.db, cutoff)).toBe(0);

      app.startDelivery();
      const deadline = Date.now() + 15_000;
      while ((await feedPosition(app)) !== undefined) {
        if (Date.now() > deadline) throw new Error("the feeder kept its cursor with no webhook enabled");
        await sleep(50);
      }
      expect(await purgeEvents(app.database.db, cutoff)).toBe(ids.length);
      expect(await keptIds(app)).toEqual([]);
      expect(hook.received).toEqual([]);
    } finally {
      await hook.close();
      await app.close();
    }
  });
});
