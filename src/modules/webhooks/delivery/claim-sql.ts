import { statement } from "../../../db/index.js";
import type { EventRecord } from "../../events/types.js";

/** A delivery this instance claimed: its attempt is this instance's until `claimed_until`. */
export interface Claim {
  id: string;
  webhook_id: string;
  event_id: bigint;
  attempts: number;
}

const jsonList = { sqlite: "SELECT value FROM json_each", postgresql: "SELECT json_array_elements_text" } as const;

export const dispatchStatements = {
  /**
   * Due deliveries of enabled webhooks, oldest due first, skipping the
   * webhooks (a JSON array of ids) whose attempts already fill their share
   * here. Each endpoint's due deliveries are read from
   * deliveries_webhook_id_status_next_attempt_at_idx, at most `perEndpoint` each:
   * an endpoint with a long backlog (a slow or failing receiver) costs one
   * short index probe, never a walk past all its rows.
   */
  candidates: statement<
    { id: string; webhook_id: string },
    [now: Date, limit: number, full: string, perEndpoint: number]
  >("deliveries_candidates", {
    sqlite: `SELECT d.id, d.webhook_id FROM webhooks w JOIN deliveries d ON d.id IN (
          SELECT id FROM deliveries INDEXED BY deliveries_webhook_id_status_next_attempt_at_idx
          WHERE webhook_id = w.id AND status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $4)
        WHERE w.enabled AND w.id NOT IN (${jsonList.sqlite}($3))
        ORDER BY d.next_attempt_at LIMIT $2`,
    postgresql: `SELECT d.id, d.webhook_id FROM webhooks w CROSS JOIN LATERAL (
          SELECT id, webhook_id, next_attempt_at FROM deliveries
          WHERE webhook_id = w.id AND status = 'pending' AND next_attempt_at <= $1
          ORDER BY next_attempt_at LIMIT $4) d
        WHERE w.enabled AND w.id NOT IN (${jsonList.postgresql}($3::json))
        ORDER BY d.next_attempt_at LIMIT $2`,
  }),
  /**
   * Claims those of `ids` (a JSON array) still due, atomically: the due
   * time moves to the claim's end, so no other instance takes them while
   * the attempt runs, and they are due again by themselves if this instance
   * dies before recording it. PostgreSQL skips rows another claim holds;
   * SQLite runs it as the one writer.
   */
  claim: statement<Claim, [ids: string, until: Date, now: Date]>("deliveries_claim", {
    // The unary + keeps SQLite on the primary key: by the status index it would walk every due delivery.
    sqlite: `UPDATE deliveries SET next_attempt_at = $2, claimed_until = $2
      WHERE id IN (${jsonList.sqlite}($1)) AND +status = 'pending' AND +next_attempt_at <= $3
      RETURNING id, webhook_id, event_id, attempts`,
    postgresql: `WITH claimable AS (
        SELECT id FROM deliveries WHERE id IN (${jsonList.postgresql}($1::json))
          AND status = 'pending' AND next_attempt_at <= $3
        FOR UPDATE SKIP LOCKED)
      UPDATE deliveries d SET next_attempt_at = $2, claimed_until = $2 FROM claimable c WHERE d.id = c.id
      RETURNING d.id, d.webhook_id, d.event_id, d.attempts`,
  }),
  /** The earliest due time of an enabled webhook's pending delivery: when the dispatcher looks next. */
  nextDue: statement<{ due: string }>(
    "deliveries_next_due",
    `SELECT d.next_attempt_at AS due FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.enabled
     WHERE d.status = 'pending' AND d.next_attempt_at IS NOT NULL ORDER BY d.next_attempt_at LIMIT 1`,
  ),
  /** The events of a batch of claims (a JSON array of ids as strings: they may not fit a double). */
  events: statement<EventRecord, [ids: string]>("deliveries_events", {
    sqlite: `SELECT id, type, occurred_at, agent_id, task_id, data FROM events
      WHERE id IN (SELECT CAST(value AS INTEGER) FROM json_each($1))`,
    postgresql: `SELECT id, type, occurred_at, agent_id, task_id, data FROM events
      WHERE id IN (SELECT json_array_elements_text($1::json)::bigint)`,
  }),
  /**
   * The webhook's URL with each secret that signs now, newest first, read in
   * one statement so that a webhook deleted meanwhile is either whole or gone
   * (no rows), never a URL without its secrets.
   */
  target: statement<{ url: string; secret: string | null }, [id: string, now: Date]>(
    "deliveries_target",
    `SELECT w.url, s.secret FROM webhooks w LEFT JOIN webhook_secrets s
       ON s.webhook_id = w.id AND (s.expires_at IS NULL OR s.expires_at > $2)
     WHERE w.id = $1 ORDER BY s.created_at DESC`,
  ),
  /** Nothing can be sent (the event is no longer kept): failed without an attempt. */
  giveUp: statement<unknown, [id: string, claimedUntil: Date, error: string, now: Date]>(
    "deliveries_give_up",
    `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, claimed_until = NULL, last_error = $3,
       updated_at = $4 WHERE id = $1 AND claimed_until = $2`,
  ),
  /**
   * Locks the webhooks of a batch of attempts (a JSON array of ids) before
   * any of their deliveries, in id order, and returns those still there.
   * Every transaction that writes a webhook's deliveries locks the webhook
   * first (its DELETE, PATCH, redelivery, the feed's KEY SHARE), so none
   * waits for a delivery row while holding one another waits for.
   */
  lockWebhooks: statement<{ id: string }, [ids: string]>("webhooks_lock_for_record", {
    sqlite: `SELECT id FROM webhooks WHERE id IN (${jsonList.sqlite}($1)) ORDER BY id`,
    postgresql: `SELECT id FROM webhooks WHERE id IN (${jsonList.postgresql}($1::json)) ORDER BY id
      FOR NO KEY UPDATE`,
  }),
  succeeded: statement<unknown, [webhookId: string]>(
    "webhooks_succeeded",
    "UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL",
  ),
  /** Starts (or continues) the webhook's run of failures; returns when it started. */
  failed: statement<{ failing_since: string; enabled: boolean }, [webhookId: string, at: Date]>(
    "webhooks_failed",
    "UPDATE webhooks SET failing_since = COALESCE(failing_since, $2) WHERE id = $1 RETURNING failing_since, enabled",
  ),
  disable: statement<{ id: string }, [webhookId: string, reason: string, now: Date]>(
    "webhooks_disable",
    "UPDATE webhooks SET enabled = FALSE, disabled_reason = $2, updated_at = $3 WHERE id = $1 AND enabled RETURNING id",
  ),
};
