import { randomUUID } from "node:crypto";
import type { Config } from "../../config.js";
import type { Database, Tx } from "../../db/index.js";
import { AppError, notFound, validationError } from "../../errors.js";
import type { KeptAnswer } from "../../idempotency/kept-answer.js";
import { isUuid } from "../../resources/schemas.js";
import { cipherFor } from "../../secrets/cipher.js";
import { parseEventId } from "../events/filter.js";
import { eventsService } from "../events/service.js";
import { timeOrderedUuid } from "./ids.js";
import type { DeliveryListInput, DeliveryOut, WebhookCreateInput, WebhookOut, WebhookUpdateBody } from "./schemas.js";
import { generateSecret } from "./secrets.js";
import { deliveriesChannel, deliveryStatements, feedChannel, toDelivery, toWebhook, webhookStatements } from "./sql.js";
import { checkUrl, UnsafeUrlError } from "./ssrf.js";

export const webhookNotFound = () => notFound("Webhook");

/** How long a replaced secret keeps signing (docs/api/webhooks.md), so receivers can switch without losing a message. */
export const secretOverlapMs = 24 * 3_600_000;

/** The SSRF guard at the door: a URL that could never be called is refused now, as a 400 on `url`. */
async function checkedUrl(url: string, config: Config): Promise<void> {
  try {
    await checkUrl(url, { allowPrivate: config.webhooks.allowPrivate, signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    if (error instanceof UnsafeUrlError) {
      throw validationError([{ field: "url", message: error.message.replace(/^url /, "") }]);
    }
    if (error instanceof DOMException && error.name === "TimeoutError") {
      throw validationError([{ field: "url", message: "has a host that could not be resolved in time" }]);
    }
    throw error;
  }
}

async function checkAgent(db: Database, agentId: string | null | undefined): Promise<void> {
  if (agentId && !(await db.get(webhookStatements.agentExists, [agentId]))) throw notFound("Agent");
}

/** Makes the new or re-enabled webhook part of the feed from the log's head on (see joinFeed). */
async function joinFeed(tx: Tx): Promise<void> {
  await tx.run(webhookStatements.joinFeed, [await eventsService.head(tx)]);
  await tx.notify(feedChannel);
}

export const webhooksService = {
  async list(db: Database, { skip, limit }: { skip: number; limit: number }): Promise<WebhookOut[]> {
    return (await db.all(webhookStatements.page, [limit, skip])).map(toWebhook);
  },

  async get(db: Database, id: string): Promise<WebhookOut> {
    const row = isUuid(id) ? await db.get(webhookStatements.get, [id]) : undefined;
    if (!row) throw webhookNotFound();
    return toWebhook(row);
  },

  /** The webhook and its first secret, which only this answer shows; stored encrypted. */
  async create(
    db: Database,
    config: Config,
    input: WebhookCreateInput,
    answer?: KeptAnswer,
  ): Promise<WebhookOut & { secret: string }> {
    await checkedUrl(input.url, config);
    await checkAgent(db, input.agent_id);
    const id = randomUUID();
    const secret = generateSecret();
    const sealed = cipherFor(config).encrypt(secret, id);
    const now = new Date();
    const row = await db.transaction(async (tx) => {
      await joinFeed(tx);
      const types = JSON.stringify([...new Set(input.types)]);
      const inserted = await tx.get(webhookStatements.insert, [
        id,
        input.url,
        types,
        input.agent_id ?? null,
        input.description ?? null,
        now,
      ]);
      if (!inserted) throw new Error("The insert returned no row");
      await tx.run(webhookStatements.insertSecret, [randomUUID(), id, sealed, now]);
      const created = { ...toWebhook(inserted), secret };
      await answer?.keep(tx, created);
      return created;
    });
    return row;
  },

  /**
   * Disabling pauses the pending deliveries; enabling resumes them, clears
   * `disabled_reason` and the run of failures, and joins the feed again
   * (events while it was disabled are not delivered).
   */
  async update(db: Database, config: Config, id: string, patch: WebhookUpdateBody): Promise<WebhookOut> {
    if (!isUuid(id)) throw webhookNotFound();
    if (patch.url !== undefined) await checkedUrl(patch.url, config);
    await checkAgent(db, patch.agent_id);
    const now = new Date();
    const row = await db.transaction(async (tx) => {
      const before = await tx.get(webhookStatements.lock, [id]);
      if (!before) throw webhookNotFound();
      const enabled = patch.enabled ?? before.enabled;
      const enabling = enabled && !before.enabled;
      const written = await tx.get(webhookStatements.update, [
        id,
        patch.url ?? before.url,
        patch.types ? JSON.stringify([...new Set(patch.types)]) : before.types,
        patch.agent_id === undefined ? before.agent_id : patch.agent_id,
        patch.description === undefined ? before.description : patch.description,
        enabled,
        enabled ? null : before.disabled_reason,
        now,
        enabling,
      ]);
      if (enabling) {
        await joinFeed(tx);
        await tx.run(deliveryStatements.resume, [id, now]);
        await tx.notify(deliveriesChannel);
      } else if (!enabled && before.enabled) {
        await tx.run(deliveryStatements.pause, [id]);
      }
      return written;
    });
    if (!row) throw webhookNotFound();
    return toWebhook(row);
  },

  /** Deletes the webhook with its secrets and deliveries; an attempt in flight is not recorded. */
  async remove(db: Database, id: string): Promise<void> {
    const row = isUuid(id) ? await db.get(webhookStatements.delete, [id]) : undefined;
    if (!row) throw webhookNotFound();
  },

  /** A new secret; the ones in use keep signing for the overlap, older ones are dropped. */
  async rotateSecret(db: Database, config: Config, id: string, answer?: KeptAnswer): Promise<{ secret: string }> {
    if (!isUuid(id)) throw webhookNotFound();
    const secret = generateSecret();
    const sealed = cipherFor(config).encrypt(secret, id);
    const now = new Date();
    await db.transaction(async (tx) => {
      if (!(await tx.get(webhookStatements.lock, [id]))) throw webhookNotFound();
      await tx.run(webhookStatements.dropExpiredSecrets, [id, now]);
      await tx.run(webhookStatements.retireSecrets, [id, new Date(now.getTime() + secretOverlapMs)]);
      await tx.run(webhookStatements.insertSecret, [randomUUID(), id, sealed, now]);
      await answer?.keep(tx, { secret });
    });
    return { secret };
  },
};

export const webhookDisabledConflict = () =>
  new AppError("conflict", "The webhook is disabled; enable it (PATCH enabled: true) to send deliveries");

const eventNotFound = () => notFound("Event");
const deliveryNotFound = () => notFound("Delivery");

/** The delivery log of one webhook, and sending an event again. */
export const deliveriesService = {
  /** Newest first; `after` (a delivery of this webhook) continues below it. */
  async list(db: Database, { webhook_id: webhookId, after, limit, status }: DeliveryListInput): Promise<DeliveryOut[]> {
    if (!isUuid(webhookId) || !(await db.get(webhookStatements.get, [webhookId]))) throw webhookNotFound();
    let rows: Parameters<typeof toDelivery>[0][];
    if (after !== undefined) {
      const from = isUuid(after) ? await db.get(deliveryStatements.get, [webhookId, after]) : undefined;
      if (!from) throw deliveryNotFound();
      // A Date, so that each database compares it in the form it stores.
      const createdAt = new Date(from.created_at);
      rows = status
        ? await db.all(deliveryStatements.pageByStatusAfter, [webhookId, status, limit, createdAt, from.id])
        : await db.all(deliveryStatements.pageAfter, [webhookId, limit, createdAt, from.id]);
    } else {
      rows = status
        ? await db.all(deliveryStatements.pageByStatus, [webhookId, status, limit])
        : await db.all(deliveryStatements.page, [webhookId, limit]);
    }
    return rows.map(toDelivery);
  },

  /** A new delivery of a kept event, due now, whatever the webhook's filters say (its owner asked for it). */
  async redeliver(db: Database, webhookId: string, eventIdText: string, answer?: KeptAnswer): Promise<DeliveryOut> {
    if (!isUuid(webhookId)) throw webhookNotFound();
    const eventId = parseEventId(eventIdText);
    const row = await db.transaction(async (tx) => {
      const webhook = await tx.get(webhookStatements.lock, [webhookId]);
      if (!webhook) throw webhookNotFound();
      if (eventId === undefined || !(await eventsService.exists(tx, eventId))) throw eventNotFound();
      if (!webhook.enabled) throw webhookDisabledConflict();
      const inserted = await tx.get(deliveryStatements.insert, [timeOrderedUuid(), webhookId, eventId, new Date()]);
      if (!inserted) throw new Error("The insert returned no row");
      await tx.notify(deliveriesChannel);
      const delivery = toDelivery(inserted);
      await answer?.keep(tx, delivery);
      return delivery;
    });
    return row;
  },
};
