import { statement } from "../../db/index.js";
import type { DeliveryOut, WebhookOut } from "./schemas.js";

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

const webhookColumns = "id, url, types, agent_id, description, enabled, disabled_reason, created_at, updated_at";

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

/**
 * The position of the event log up to which every enabled webhook has its
 * deliveries (./delivery/feeder.ts). Named `<reader>:feed`, so the event
 * purge never passes it (../events/purge.ts).
 */
export const feedCursor = "webhooks:feed";
/** Wakes every instance's feeder (./delivery.ts): a webhook joined the feed, so events are worth reading again. */
export const feedChannel = "webhooks_feed";

export const webhookStatements = {
  agentExists: statement<{ id: string }, [agentId: string, projectId: string]>(
    "webhooks_agent_exists",
    "SELECT id FROM agents WHERE id = $1 AND project_id = $2",
  ),
  get: statement<WebhookRow, [id: string, projectId: string]>(
    "webhooks_get",
    `SELECT ${webhookColumns} FROM webhooks WHERE id = $1 AND project_id = $2`,
  ),
  page: statement<WebhookRow, [limit: number, skip: number, projectId: string]>(
    "webhooks_page",
    `SELECT ${webhookColumns} FROM webhooks WHERE project_id = $3 ORDER BY created_at, id LIMIT $1 OFFSET $2`,
  ),
  insert: statement<
    WebhookRow,
    [
      id: string,
      url: string,
      types: string,
      agentId: string | null,
      description: string | null,
      now: Date,
      projectId: string,
    ]
  >(
    "webhooks_insert",
    `INSERT INTO webhooks (id, project_id, url, types, agent_id, description, enabled, created_at, updated_at)
     VALUES ($1, $7, $2, $3, $4, $5, TRUE, $6, $6) RETURNING ${webhookColumns}`,
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
      projectId: string,
    ]
  >(
    "webhooks_update",
    `UPDATE webhooks SET url = $2, types = $3, agent_id = $4, description = $5, enabled = $6,
       disabled_reason = $7, updated_at = $8, failing_since = CASE WHEN $9 THEN NULL ELSE failing_since END
     WHERE id = $1 AND project_id = $10 RETURNING ${webhookColumns}`,
  ),
  /** Locks the row on PostgreSQL, so a concurrent PATCH reads what the other wrote. */
  lock: statement<WebhookRow, [id: string, projectId: string]>("webhooks_lock", {
    sqlite: `SELECT ${webhookColumns} FROM webhooks WHERE id = $1 AND project_id = $2`,
    postgresql: `SELECT ${webhookColumns} FROM webhooks WHERE id = $1 AND project_id = $2 FOR UPDATE`,
  }),
  delete: statement<{ id: string; url: string }, [id: string, projectId: string]>(
    "webhooks_delete",
    "DELETE FROM webhooks WHERE id = $1 AND project_id = $2 RETURNING id, url",
  ),
  /** Every project's enabled webhooks, for feeding: an event goes only to its own project's. */
  subscriptions: statement<{ id: string; project_id: string; types: string; agent_id: string | null }>(
    "webhooks_subscriptions",
    "SELECT id, project_id, types, agent_id FROM webhooks WHERE enabled",
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

/** Wakes every instance's dispatcher (./dispatcher.ts): deliveries became due. */
export const deliveriesChannel = "webhook_deliveries";

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: bigint;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  created_at: string;
  updated_at: string;
}

const deliveryColumns =
  "id, webhook_id, event_id, status, attempts, next_attempt_at, last_status_code, last_error, last_duration_ms, created_at, updated_at";

export const toDelivery = (row: DeliveryRow): DeliveryOut => ({
  id: row.id,
  webhook_id: row.webhook_id,
  event_id: String(row.event_id),
  status: row.status as DeliveryOut["status"],
  attempts: row.attempts,
  next_attempt_at: row.next_attempt_at,
  last_status_code: row.last_status_code,
  last_error: row.last_error,
  last_duration_ms: row.last_duration_ms,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

// Newest first, by (created_at, id) descending: served by deliveries_webhook_id_created_at_id_idx
// (or, with a status, deliveries_webhook_id_status_created_at_id_idx).
const page = (status: boolean, after: boolean) => {
  const p = status ? 3 : 2;
  const conditions = [
    "webhook_id = $1",
    ...(status ? ["status = $2"] : []),
    ...(after ? [`(created_at < $${p + 1} OR (created_at = $${p + 1} AND id < $${p + 2}))`] : []),
  ];
  return `SELECT ${deliveryColumns} FROM deliveries WHERE ${conditions.join(" AND ")}
    ORDER BY created_at DESC, id DESC LIMIT $${p}`;
};

export const deliveryStatements = {
  get: statement<DeliveryRow, [webhookId: string, id: string]>(
    "deliveries_get",
    `SELECT ${deliveryColumns} FROM deliveries WHERE webhook_id = $1 AND id = $2`,
  ),
  page: statement<DeliveryRow, [webhookId: string, limit: number]>("deliveries_page", page(false, false)),
  pageAfter: statement<DeliveryRow, [webhookId: string, limit: number, createdAt: Date, id: string]>(
    "deliveries_page_after",
    page(false, true),
  ),
  pageByStatus: statement<DeliveryRow, [webhookId: string, status: string, limit: number]>(
    "deliveries_page_by_status",
    page(true, false),
  ),
  pageByStatusAfter: statement<
    DeliveryRow,
    [webhookId: string, status: string, limit: number, createdAt: Date, id: string]
  >("deliveries_page_by_status_after", page(true, true)),
  insert: statement<DeliveryRow, [id: string, webhookId: string, eventId: bigint, now: Date]>(
    "deliveries_insert",
    `INSERT INTO deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES ($1, $2, $3, 'pending', 0, $4, $4, $4) RETURNING ${deliveryColumns}`,
  ),
  /**
   * Many deliveries in one statement, from a JSON array of
   * `{"id", "webhook_id", "event_id"}` (the event id as a string: it may not fit a double).
   */
  insertMany: statement<unknown, [rows: string, now: Date]>("deliveries_insert_many", {
    sqlite: `INSERT INTO deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at, updated_at)
      SELECT json_extract(value, '$.id'), json_extract(value, '$.webhook_id'),
        CAST(json_extract(value, '$.event_id') AS INTEGER), 'pending', 0, $2, $2, $2
      FROM json_each($1)`,
    postgresql: `INSERT INTO deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at, updated_at)
      SELECT r.id, r.webhook_id, r.event_id::bigint, 'pending', 0, $2, $2, $2
      FROM json_to_recordset($1::json) AS r(id text, webhook_id text, event_id text)`,
  }),
  /**
   * A disabled webhook's deliveries wait, with no due time, until it is
   * enabled again. An attempt in flight still finishes (its claim is
   * `claimed_until`, untouched here).
   */
  pause: statement<unknown, [webhookId: string]>(
    "deliveries_pause",
    "UPDATE deliveries SET next_attempt_at = NULL WHERE webhook_id = $1 AND status = 'pending'",
  ),
  resume: statement<unknown, [webhookId: string, now: Date]>(
    "deliveries_resume",
    `UPDATE deliveries SET next_attempt_at = $2
     WHERE webhook_id = $1 AND status = 'pending' AND next_attempt_at IS NULL`,
  ),
};
