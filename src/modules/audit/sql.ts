import { statement } from "../../db/index.js";
import { postgresOrderedId, readHorizon } from "../../db/log-order.js";

/** An audit_events row as the statements below return it. */
export interface AuditRow {
  id: bigint;
  occurred_at: string;
  action: string;
  actor_type: string;
  actor_id: string | null;
  actor_label: string | null;
  target_type: string;
  target_id: string;
  request_id: string | null;
  client_address: string | null;
  details: string;
}

const columns = `id, occurred_at, action, actor_type, actor_id, actor_label, target_type, target_id, request_id,
  client_address, details`;

type EntryColumns = [
  projectId: string,
  occurredAt: Date,
  action: string,
  actorType: string,
  actorId: string | null,
  actorLabel: string | null,
  targetType: string,
  targetId: string,
  requestId: string | null,
  clientAddress: string | null,
  details: string,
];

// The filters of a page, each NULL when not asked for: exact actions and action prefixes as JSON arrays.
const filtered = {
  sqlite: `AND ($3 IS NULL OR action IN (SELECT value FROM json_each($3))
      OR EXISTS (SELECT 1 FROM json_each($4) AS prefix WHERE substr(action, 1, length(prefix.value)) = prefix.value))
    AND ($5 IS NULL OR actor_id = $5)`,
  postgresql: `AND ($3::text IS NULL OR action IN (SELECT json_array_elements_text($3::json))
      OR EXISTS (SELECT 1 FROM json_array_elements_text($4::json) AS prefix(value)
        WHERE left(action, length(prefix.value)) = prefix.value))
    AND ($5::text IS NULL OR actor_id = $5)`,
};

export const auditStatements = {
  /** PostgreSQL: one entry, its id ordered as the event log's ($1: its ordinal in the transaction). */
  insertOrdered: statement<unknown, [ordinal: number, ...EntryColumns]>("audit_insert_ordered", {
    postgresql: `INSERT INTO audit_events (id, project_id, occurred_at, action, actor_type, actor_id, actor_label,
        target_type, target_id, request_id, client_address, details)
      VALUES (${postgresOrderedId("$1")}, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
  }),
  /** SQLite: writers are serialised, so a counter gives ids in commit order (see the event log's). */
  reserveId: statement<{ position: bigint }>("audit_reserve_id", {
    sqlite: `INSERT INTO outbox_cursors (name, position) VALUES ('audit:last_id', 1)
      ON CONFLICT (name) DO UPDATE SET position = position + 1 RETURNING position`,
  }),
  insert: statement<unknown, [id: bigint, ...EntryColumns]>("audit_insert", {
    sqlite: `INSERT INTO audit_events (id, project_id, occurred_at, action, actor_type, actor_id, actor_label,
        target_type, target_id, request_id, client_address, details)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
  }),
  /** A page of a project's entries after `after`, oldest first (audit_events_project_id_id_idx). */
  page: statement<
    AuditRow,
    [
      projectId: string,
      after: bigint,
      actions: string | null,
      prefixes: string | null,
      actorId: string | null,
      limit: number,
    ]
  >("audit_page", {
    sqlite: `SELECT ${columns} FROM audit_events WHERE project_id = $1 AND id > $2 ${filtered.sqlite}
      ORDER BY id LIMIT $6`,
    postgresql: `SELECT ${columns} FROM audit_events WHERE project_id = $1 AND id > $2 AND id < ${readHorizon}
      ${filtered.postgresql} ORDER BY id LIMIT $6`,
  }),
  /** The oldest entries past retention, by age (audit_events_occurred_at_idx). */
  purge: statement<unknown, [cutoff: Date, limit: number]>("audit_purge", {
    sqlite: `DELETE FROM audit_events WHERE id IN (
      SELECT id FROM audit_events WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2)`,
    postgresql: `DELETE FROM audit_events WHERE id IN (
      SELECT id FROM audit_events WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2)`,
  }),
};
