import { type Database, statement } from "../../db/index.js";
import { notFound } from "../../errors.js";
import { isUuid } from "../../resources/schemas.js";
import { deliveriesChannel, deliveryStatements as statements, toDelivery } from "./delivery-sql.js";
import { timeOrderedUuid } from "./ids.js";
import type { DeliveryListInput, DeliveryOut } from "./schemas.js";
import { webhookDisabledConflict, webhookNotFound } from "./service.js";
import { webhookStatements } from "./sql.js";

const eventNotFound = () => notFound("Event");
const deliveryNotFound = () => notFound("Delivery");

const eventExists = statement<{ id: bigint }, [id: bigint]>(
  "webhooks_event_exists",
  "SELECT id FROM events WHERE id = $1",
);

const maxEventId = 2n ** 63n - 1n;

/** An event id as the API writes it (decimal digits), or undefined when the text cannot name one. */
function parseEventId(text: string): bigint | undefined {
  if (!/^\d{1,19}$/.test(text)) return undefined;
  const id = BigInt(text);
  return id <= maxEventId ? id : undefined;
}

/** The delivery log of one webhook, and sending an event again. */
export const deliveriesService = {
  /** Newest first; `after` (a delivery of this webhook) continues below it. */
  async list(db: Database, { webhook_id: webhookId, after, limit, status }: DeliveryListInput): Promise<DeliveryOut[]> {
    if (!isUuid(webhookId) || !(await db.get(webhookStatements.get, [webhookId]))) throw webhookNotFound();
    let rows: Parameters<typeof toDelivery>[0][];
    if (after !== undefined) {
      const from = isUuid(after) ? await db.get(statements.get, [webhookId, after]) : undefined;
      if (!from) throw deliveryNotFound();
      // A Date, so that each database compares it in the form it stores.
      const createdAt = new Date(from.created_at);
      rows = status
        ? await db.all(statements.pageByStatusAfter, [webhookId, status, limit, createdAt, from.id])
        : await db.all(statements.pageAfter, [webhookId, limit, createdAt, from.id]);
    } else {
      rows = status
        ? await db.all(statements.pageByStatus, [webhookId, status, limit])
        : await db.all(statements.page, [webhookId, limit]);
    }
    return rows.map(toDelivery);
  },

  /** A new delivery of a kept event, due now, whatever the webhook's filters say (its owner asked for it). */
  async redeliver(db: Database, webhookId: string, eventIdText: string): Promise<DeliveryOut> {
    if (!isUuid(webhookId)) throw webhookNotFound();
    const eventId = parseEventId(eventIdText);
    const row = await db.transaction(async (tx) => {
      const webhook = await tx.get(webhookStatements.lock, [webhookId]);
      if (!webhook) throw webhookNotFound();
      if (eventId === undefined || !(await tx.get(eventExists, [eventId]))) throw eventNotFound();
      if (!webhook.enabled) throw webhookDisabledConflict();
      const inserted = await tx.get(statements.insert, [timeOrderedUuid(), webhookId, eventId, new Date()]);
      await tx.notify(deliveriesChannel);
      return inserted;
    });
    if (!row) throw new Error("The insert returned no row");
    return toDelivery(row);
  },
};
