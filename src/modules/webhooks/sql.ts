import { statement } from "../../db/index.js";
import type { WebhookOut } from "./schemas.js";

/** A webhooks row as the statements below return it: only these columns ever leave the database. */
export interface WebhookRow {
  id: string;
  url: string;
  types: string;
  agent_id: string | null;
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

const columns = "id, url, types, agent_id, description, enabled, disabled_reason, created_at, updated_at";

export const toWebhook = (row: WebhookRow): WebhookOut => ({
  id: row.id,
  url: row.url,
  types: JSON.parse(row.types),
  agent_id: row.agent_id,
  description: row.description,
  enabled: row.enabled,
  created_at: row.created_at,
  updated_at: row.updated_at,
  disabled_reason: row.disabled_reason,
});

/** The position of the event log up to which every enabled webhook has its deliveries (./feeder.ts). */
export const feedCursor = "webhooks:feed";
/** Wakes every instance's feeder (./delivery.ts): a webhook joined the feed, so events are worth reading again. */
export const feedChannel = "webhooks_feed";

export const webhookStatements = {
  get: statement<WebhookRow, [id: string]>("webhooks_get", `SELECT ${columns} FROM webhooks WHERE id = $1`),
  page: statement<WebhookRow, [limit: number, skip: number]>(
    "webhooks_page",
    `SELECT ${columns} FROM webhooks ORDER BY created_at, id LIMIT $1 OFFSET $2`,
  ),
  insert: statement<
    WebhookRow,
    [id: string, url: string, types: string, agentId: string | null, description: string | null, now: Date]
  >(
    "webhooks_insert",
    `INSERT INTO webhooks (id, url, types, agent_id, description, enabled, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, TRUE, $6, $6) RETURNING ${columns}`,
  ),
  update: statement<
    WebhookRow,
    [
      id: string,
      url: string,
      types: string,
      agentId: string | null,
      description: string | null,
      enabled: boolean,
      disabledReason: string | null,
      now: Date,
      resetFailures: boolean,
    ]
  >(
    "webhooks_update",
    `UPDATE webhooks SET url = $2, types = $3, agent_id = $4, description = $5, enabled = $6,
       disabled_reason = $7, updated_at = $8, failing_since = CASE WHEN $9 THEN NULL ELSE failing_since END
     WHERE id = $1 RETURNING ${columns}`,
  ),
  /** Locks the row on PostgreSQL, so a concurrent PATCH reads what the other wrote. */
  lock: statement<WebhookRow, [id: string]>("webhooks_lock", {
    sqlite: `SELECT ${columns} FROM webhooks WHERE id = $1`,
    postgresql: `SELECT ${columns} FROM webhooks WHERE id = $1 FOR UPDATE`,
  }),
  delete: statement<{ id: string }, [id: string]>("webhooks_delete", "DELETE FROM webhooks WHERE id = $1 RETURNING id"),
  subscriptions: statement<{ id: string; types: string; agent_id: string | null }>(
    "webhooks_subscriptions",
    "SELECT id, types, agent_id FROM webhooks WHERE enabled",
  ),
  insertSecret: statement<unknown, [id: string, webhookId: string, secret: string, now: Date]>(
    "webhook_secrets_insert",
    "INSERT INTO webhook_secrets (id, webhook_id, secret, created_at) VALUES ($1, $2, $3, $4)",
  ),
  /** The current secret keeps signing for the overlap; secrets whose overlap ended are gone. */
  retireSecrets: statement<unknown, [webhookId: string, until: Date]>(
    "webhook_secrets_retire",
    "UPDATE webhook_secrets SET expires_at = $2 WHERE webhook_id = $1 AND expires_at IS NULL",
  ),
  dropExpiredSecrets: statement<unknown, [webhookId: string, now: Date]>(
    "webhook_secrets_drop_expired",
    "DELETE FROM webhook_secrets WHERE webhook_id = $1 AND expires_at <= $2",
  ),
  validSecrets: statement<{ secret: string }, [webhookId: string, now: Date]>(
    "webhook_secrets_valid",
    `SELECT secret FROM webhook_secrets WHERE webhook_id = $1 AND (expires_at IS NULL OR expires_at > $2)
     ORDER BY created_at DESC`,
  ),
  /**
   * Makes sure the feed's cursor exists, starting at `head` when it did not,
   * and locks it on PostgreSQL until the transaction ends: a webhook created
   * or enabled now is seen by every feed after this one, none runs meanwhile.
   */
  joinFeed: statement<unknown, [head: bigint]>(
    "webhooks_join_feed",
    `INSERT INTO outbox_cursors (name, position) VALUES ('${feedCursor}', $1)
     ON CONFLICT (name) DO UPDATE SET position = outbox_cursors.position`,
  ),
};
