import { type Database, statement } from "../../../db/index.js";
import { eventsService } from "../../events/service.js";
import { timeOrderedUuid } from "../ids.js";
import { type WebhookInterest, wants } from "../interests.js";
import { deliveriesChannel, deliveryStatements, feedCursor, webhookStatements } from "../sql.js";

// Events turned into deliveries per transaction.
const BATCH = 500;

const statements = {
  cursor: statement<{ position: bigint }>(
    "webhooks_feed_cursor",
    `SELECT position FROM outbox_cursors WHERE name = '${feedCursor}'`,
  ),
  /** On PostgreSQL, one feed at a time across instances: the others wait here, then find nothing new. */
  lockCursor: statement<{ position: bigint }>("webhooks_feed_lock", {
    sqlite: `SELECT position FROM outbox_cursors WHERE name = '${feedCursor}'`,
    postgresql: `SELECT position FROM outbox_cursors WHERE name = '${feedCursor}' FOR UPDATE`,
  }),
  advance: statement<unknown, [position: bigint]>(
    "webhooks_feed_advance",
    `UPDATE outbox_cursors SET position = $1 WHERE name = '${feedCursor}'`,
  ),
  leave: statement("webhooks_feed_leave", `DELETE FROM outbox_cursors WHERE name = '${feedCursor}'`),
  /**
   * Those of the webhooks (a JSON array of ids) still there and enabled,
   * kept so until the feed commits (FOR KEY SHARE, in id order, as the
   * recorder locks them). One being deleted or disabled is waited for and
   * then left out: its deliveries are not written, rather than failing the
   * whole feed on the foreign key.
   */
  keep: statement<{ id: string }, [ids: string]>("webhooks_feed_keep", {
    sqlite: "SELECT id FROM webhooks WHERE id IN (SELECT value FROM json_each($1)) AND enabled ORDER BY id",
    postgresql: `SELECT id FROM webhooks WHERE id IN (SELECT json_array_elements_text($1::json)) AND enabled
      ORDER BY id FOR KEY SHARE`,
  }),
};

export interface FeedRound {
  /** Events read; a full batch means there may be more. */
  events: number;
  deliveries: number;
  /** No webhook is enabled (the cursor is gone): no event needs reading until one joins the feed. */
  idle: boolean;
}

const nothing: FeedRound = { events: 0, deliveries: 0, idle: false };
const idle: FeedRound = { events: 0, deliveries: 0, idle: true };
export const feedBatch = BATCH;

/**
 * Turns the events after the feed's cursor into deliveries, one per enabled
 * webhook whose filters match, and advances the cursor in the same
 * transaction: each event becomes each webhook's delivery exactly once,
 * whichever instance feeds and whenever one crashes. With no webhook enabled
 * the cursor is dropped and nothing is written until one is created or
 * enabled again (which puts the cursor back at the log's head).
 */
export async function feed(db: Database): Promise<FeedRound> {
  // A read outside any transaction first: when nothing is new, nothing is written or locked.
  const cursor = await db.get(statements.cursor, []);
  if (!cursor) return idle;
  if ((await eventsService.readEveryProject(db, cursor.position, 1)).length === 0) return nothing;
  return db.transaction(async (tx) => {
    const locked = await tx.get(statements.lockCursor, []);
    if (!locked) return idle;
    const interests: WebhookInterest[] = (await tx.all(webhookStatements.subscriptions, [])).map((row) => ({
      id: row.id,
      projectId: row.project_id,
      types: JSON.parse(row.types),
      agentId: row.agent_id,
    }));
    if (interests.length === 0) {
      await tx.run(statements.leave, []);
      return idle;
    }
    const events = await eventsService.readEveryProject(tx, locked.position, BATCH);
    const last = events.at(-1);
    if (!last) return nothing;
    const wanted = events.flatMap((event) =>
      interests
        .filter((interest) => wants(interest, event))
        .map((interest) => ({ id: timeOrderedUuid(), webhook_id: interest.id, event_id: String(event.id) })),
    );
    const targets = [...new Set(wanted.map((row) => row.webhook_id))];
    const kept = new Set<string>();
    if (targets.length > 0) for (const { id } of await tx.all(statements.keep, [JSON.stringify(targets)])) kept.add(id);
    const rows = wanted.filter((row) => kept.has(row.webhook_id));
    if (rows.length > 0) {
      await tx.run(deliveryStatements.insertMany, [JSON.stringify(rows), new Date()]);
      await tx.notify(deliveriesChannel);
    }
    await tx.run(statements.advance, [last.id]);
    return { events: events.length, deliveries: rows.length, idle: false };
  });
}
