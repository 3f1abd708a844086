import { type Provider, statement } from "../../../db/index.js";
import { sqliteTimestamp } from "../../../db/values.js";

/**
 * Statements that record a batch of attempts at once, each from a JSON array
 * of rows: one statement per kind of write, whatever the batch's size.
 * Timestamps inside the JSON are in the form each database stores
 * (`jsonTimestamp`), so they compare equal to those written by parameters.
 */
export const jsonTimestamp = (provider: Provider, date: Date | null) =>
  date === null ? null : provider === "sqlite" ? sqliteTimestamp(date) : date.toISOString();

/** One attempt's outcome for `finishMany`. */
export interface FinishRow {
  id: string;
  claimed_until: string;
  status: string;
  next_attempt_at: string | null;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** One row of `delivery_attempts` for `insertAttemptsMany`. */
export interface AttemptRow {
  id: string;
  delivery_id: string;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

const finishColumns = ["id", "claimed_until", "status", "next_attempt_at", "status_code", "error", "duration_ms"];
const attemptColumns = ["id", "delivery_id", "attempted_at", "status_code", "error", "duration_ms"];
const sqliteRows = (columns: string[]) =>
  `SELECT ${columns.map((column) => `json_extract(value, '$.${column}') AS ${column}`).join(", ")} FROM json_each($1)`;

export const recordStatements = {
  /**
   * Each attempt's outcome, written only where the claim is still this
   * instance's (the same claimed_until); returns the deliveries written.
   */
  finishMany: statement<{ id: string }, [rows: string, now: Date]>("deliveries_finish_many", {
    sqlite: `UPDATE deliveries AS d SET status = r.status, attempts = d.attempts + 1,
        next_attempt_at = r.next_attempt_at, claimed_until = NULL, last_status_code = r.status_code,
        last_error = r.error, last_duration_ms = r.duration_ms, updated_at = $2
      FROM (${sqliteRows(finishColumns)}) AS r
      WHERE d.id = r.id AND d.claimed_until = r.claimed_until
      RETURNING id`,
    postgresql: `UPDATE deliveries AS d SET status = r.status, attempts = d.attempts + 1,
        next_attempt_at = r.next_attempt_at, claimed_until = NULL, last_status_code = r.status_code,
        last_error = r.error, last_duration_ms = r.duration_ms, updated_at = $2
      FROM json_to_recordset($1::json) AS r(id text, claimed_until timestamp(3), status text,
        next_attempt_at timestamp(3), status_code integer, error text, duration_ms integer)
      WHERE d.id = r.id AND d.claimed_until = r.claimed_until
      RETURNING d.id`,
  }),
  insertAttemptsMany: statement<unknown, [rows: string]>("delivery_attempts_insert_many", {
    sqlite: `INSERT INTO delivery_attempts (${attemptColumns.join(", ")}) ${sqliteRows(attemptColumns)}`,
    postgresql: `INSERT INTO delivery_attempts (${attemptColumns.join(", ")})
      SELECT ${attemptColumns.join(", ")} FROM json_to_recordset($1::json) AS r(id text, delivery_id text,
        attempted_at timestamp(3), status_code integer, error text, duration_ms integer)`,
  }),
};
