import { statement } from "../../db/index.js";
import type { DeliveryOut } from "./schemas.js";

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

const columns =
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
  return `SELECT ${columns} FROM deliveries WHERE ${conditions.join(" AND ")}
    ORDER BY created_at DESC, id DESC LIMIT $${p}`;
};

export const deliveryStatements = {
  get: statement<DeliveryRow, [webhookId: string, id: string]>(
    "deliveries_get",
    `SELECT ${columns} FROM deliveries WHERE webhook_id = $1 AND id = $2`,
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
     VALUES ($1, $2, $3, 'pending', 0, $4, $4, $4) RETURNING ${columns}`,
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
