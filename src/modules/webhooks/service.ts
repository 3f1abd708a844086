import { randomUUID } from "node:crypto";
import type { Config } from "../../config.js";
import type { Database, Tx } from "../../db/index.js";
import { AppError, notFound, validationError } from "../../errors.js";
import type { KeptAnswer } from "../../idempotency/kept-answer.js";
import type { Acting } from "../../resources/acting.js";
import { changesOf } from "../../resources/conditional-writes.js";
import { isUuid } from "../../resources/schemas.js";
import { cipherFor } from "../../secrets/cipher.js";
import { auditService } from "../audit/service.js";
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

/** A webhook names an agent of its own project, or none. */
async function checkAgent(db: Database, projectId: string, agentId: string | null | undefined): Promise<void> {
  const exists = agentId && isUuid(agentId) && (await db.get(webhookStatements.agentExists, [agentId, projectId]));
  if (agentId && !exists) throw notFound("Agent");
}

/** Makes the new or re-enabled webhook part of the feed from the log's head on (see joinFeed). */
async function joinFeed(tx: Tx): Promise<void> {
  await tx.run(webhookStatements.joinFeed, [await eventsService.head(tx)]);
  await tx.notify(feedChannel);
}

/** What the audit log records of a webhook: never its secret. */
const auditDetails = (webhook: WebhookOut) => ({
  url: webhook.url,
  types: webhook.types,
  agent_id: webhook.agent_id,
  enabled: webhook.enabled,
});
const auditedFields = ["url", "types", "agent_id", "description", "enabled"] as const;

export const webhooksService = {
  async list(db: Database, projectId: string, { skip, limit }: { skip: number; limit: number }): Promise<WebhookOut[]> {
    return (await db.all(webhookStatements.page, [limit, skip, projectId])).map(toWebhook);
  },

  async get(db: Database, projectId: string, id: string): Promise<WebhookOut> {
    const row = isUuid(id) ? await db.get(webhookStatements.get, [id, projectId]) : undefined;
    if (!row) throw webhookNotFound();
    return toWebhook(row);
  },

  /** The webhook and its first secret, which only this answer shows; stored encrypted. */
  async create(
    db: Database,
    config: Config,
    acting: Acting,
    input: WebhookCreateInput,
    answer?: KeptAnswer,
  ): Promise<WebhookOut & { secret: string }> {
    await checkedUrl(input.url, config);
    await checkAgent(db, acting.projectId, input.agent_id);
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
        acting.projectId,
      ]);
      if (!inserted) throw new Error("The insert returned no row");
      await tx.run(webhookStatements.insertSecret, [randomUUID(), id, sealed, now]);
      const webhook = toWebhook(inserted);
      await auditService.record(tx, acting, "webhook.created", { type: "webhook", id }, auditDetails(webhook));
      const created = { ...webhook, secret };
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
  async update(
    db: Database,
    config: Config,
    acting: Acting,
    id: string,
    patch: WebhookUpdateBody,
  ): Promise<WebhookOut> {
    if (!isUuid(id)) throw webhookNotFound();
    if (patch.url !== undefined) await checkedUrl(patch.url, config);
    await checkAgent(db, acting.projectId, patch.agent_id);
    const now = new Date();
    const row = await db.transaction(async (tx) => {
      const before = await tx.get(webhookStatements.lock, [id, acting.projectId]);
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
        acting.projectId,
      ]);
      if (!written) throw webhookNotFound();
      const changes = changesOf(toWebhook(before), toWebhook(written), auditedFields);
      if (changes) await auditService.record(tx, acting, "webhook.updated", { type: "webhook", id }, { changes });
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
  async remove(db: Database, acting: Acting, id: string): Promise<void> {
    if (!isUuid(id)) throw webhookNotFound();
    await db.transaction(async (tx) => {
      const row = await tx.get(webhookStatements.delete, [id, acting.projectId]);
      if (!row) throw webhookNotFound();
      await auditService.record(tx, acting, "webhook.deleted", { type: "webhook", id }, { url: row.url });
    });
  },

  /** A new secret; the ones in use keep signing for the overlap, older ones are dropped. */
  async rotateSecret(
    db: Database,
    config: Config,
    acting: Acting,
    id: string,
    answer?: KeptAnswer,
  ): Promise<{ secret: string }> {
    if (!isUuid(id)) throw webhookNotFound();
    const secret = generateSecret();
    const sealed = cipherFor(config).encrypt(secret, id);
    const now = new Date();
    await db.transaction(async (tx) => {
      if (!(await tx.get(webhookStatements.lock, [id, acting.projectId]))) throw webhookNotFound();
      await tx.run(webhookStatements.dropExpiredSecrets, [id, now]);
      await tx.run(webhookStatements.retireSecrets, [id, new Date(now.getTime() + secretOverlapMs)]);
      await tx.run(webhookStatements.insertSecret, [randomUUID(), id, sealed, now]);
      await auditService.record(tx, acting, "webhook.secret_rotated", { type: "webhook", id });
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
  async list(
    db: Database,
    projectId: string,
    { webhook_id: webhookId, after, limit, status }: DeliveryListInput,
  ): Promise<DeliveryOut[]> {
    if (!isUuid(webhookId) || !(await db.get(webhookStatements.get, [webhookId, projectId]))) throw webhookNotFound();
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
  async redeliver(
    db: Database,
    projectId: string,
    webhookId: string,
    eventIdText: string,
    answer?: KeptAnswer,
  ): Promise<DeliveryOut> {
    if (!isUuid(webhookId)) throw webhookNotFound();
    const eventId = parseEventId(eventIdText);
    const row = await db.transaction(async (tx) => {
      const webhook = await tx.get(webhookStatements.lock, [webhookId, projectId]);
      if (!webhook) throw webhookNotFound();
      // Another project's event is as missing as a purged one.
      if (eventId === undefined || !(await eventsService.exists(tx, projectId, eventId))) throw eventNotFound();
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
