import { randomUUID } from "node:crypto";
import type { Database, Tx } from "../../../db/index.js";
import type { Logger } from "../../../logger.js";
import { webhookDeliveries } from "../../../metrics/registry.js";
import { deliveryStatements } from "../sql.js";
import { byWebhook, deletedWebhookMessage } from "./by-webhook.js";
import { type Claim, dispatchStatements } from "./claim-sql.js";
import type { SendOutcome } from "./http-sender.js";
import { type AttemptRow, type FinishRow, jsonTimestamp, recordStatements } from "./record-sql.js";
import { nextAttemptAt, shouldDisable } from "./retry-schedule.js";

// Attempts recorded per transaction at most; more wait for the next one.
const BATCH = 200;
// Transactions start at most this often: attempts that end meanwhile share the next one.
const INTERVAL_MS = 25;

export interface RecordPolicy {
  retrySchedule: readonly number[];
  disableAfterHours: number;
}

/** A sent attempt, to be recorded while its claim (`claimedUntil`) is still this instance's. */
export interface FinishedAttempt {
  claim: Claim;
  claimedUntil: Date;
  outcome: SendOutcome;
  attemptedAt: Date;
}

interface Queued extends FinishedAttempt {
  recorded: () => void;
  failed: (error: unknown) => void;
}

export interface Recorder {
  /** Resolves once the attempt is committed (or found no longer this instance's); rejects when it could not be written. */
  record(attempt: FinishedAttempt): Promise<void>;
}

/**
 * Records finished attempts in batches, at most one transaction every
 * INTERVAL_MS: every attempt that ends meanwhile goes into the next, so the
 * database sees one transaction per batch instead of one per attempt. Each
 * attempt still gets its row, its delivery's new state and its endpoint's
 * run of failures, exactly as if recorded alone and in the same order.
 */
export function createRecorder({
  db,
  policy,
  logger,
}: {
  db: Database;
  policy: RecordPolicy;
  logger: Logger;
}): Recorder {
  const queue: Queued[] = [];
  let writing = false;
  let lastWrite = Number.NEGATIVE_INFINITY;

  async function writeAll(): Promise<void> {
    // Attempts that end before the batch is written join it.
    const wait = lastWrite + INTERVAL_MS - performance.now();
    await new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
    for (;;) {
      if (queue.length === 0) {
        writing = false;
        return;
      }
      const batch = queue.splice(0, BATCH);
      lastWrite = performance.now();
      try {
        const counted = await db.transaction((tx) => writeBatch(tx, batch));
        // Counted once committed: succeeded, pending (a retry is scheduled) or failed (no retry left).
        for (const status of counted) webhookDeliveries.inc({ outcome: status });
        for (const attempt of batch) attempt.recorded();
      } catch (error) {
        for (const attempt of batch) attempt.failed(error);
      }
    }
  }

  async function writeBatch(tx: Tx, batch: Queued[]): Promise<string[]> {
    const now = new Date();
    // The webhooks first, as their deletion locks them (then their deliveries): no deadlock between the two.
    const groups = byWebhook(batch, ({ claim }) => claim.webhook_id);
    const present = new Set(
      (await tx.all(dispatchStatements.lockWebhooks, [JSON.stringify([...groups.keys()])])).map(({ id }) => id),
    );
    for (const [webhookId, { length }] of groups) {
      if (!present.has(webhookId)) logger.info({ webhook_id: webhookId, deliveries: length }, deletedWebhookMessage);
    }
    const finishes: FinishRow[] = [];
    const statuses = new Map<string, string>();
    for (const { claim, claimedUntil, outcome } of batch.filter(({ claim }) => present.has(claim.webhook_id))) {
      const next = outcome.ok ? undefined : nextAttemptAt(policy.retrySchedule, claim.attempts + 1, now);
      const status = outcome.ok ? "succeeded" : next ? "pending" : "failed";
      statuses.set(claim.id, status);
      finishes.push({
        id: claim.id,
        claimed_until: jsonTimestamp(tx.provider, claimedUntil) as string,
        status,
        next_attempt_at: jsonTimestamp(tx.provider, next ?? null),
        status_code: outcome.statusCode ?? null,
        error: outcome.error ?? null,
        duration_ms: outcome.durationMs,
      });
    }
    // Those whose claim ran out (another instance took them) are not written.
    const written = new Set(
      (await tx.all(recordStatements.finishMany, [JSON.stringify(finishes), now])).map((r) => r.id),
    );
    const recorded = batch.filter(({ claim }) => written.has(claim.id));
    if (recorded.length === 0) return [];
    const attempts: AttemptRow[] = recorded.map(({ claim, outcome, attemptedAt }) => ({
      id: randomUUID(),
      delivery_id: claim.id,
      attempted_at: jsonTimestamp(tx.provider, attemptedAt) as string,
      status_code: outcome.statusCode ?? null,
      error: outcome.error ?? null,
      duration_ms: outcome.durationMs,
    }));
    await tx.run(recordStatements.insertAttemptsMany, [JSON.stringify(attempts)]);
    for (const [webhookId, outcomes] of byWebhook(recorded, ({ claim }) => claim.webhook_id)) {
      await recordRun(tx, webhookId, outcomes, now);
    }
    for (const { claim, outcome } of recorded) {
      logger.debug(
        {
          webhook_id: claim.webhook_id,
          delivery_id: claim.id,
          status: statuses.get(claim.id),
          status_code: outcome.statusCode ?? null,
          error: outcome.error ?? null,
        },
        "webhook delivery attempt",
      );
    }
    return recorded.map(({ claim }) => statuses.get(claim.id) as string);
  }

  /**
   * The endpoint's run of failures after these attempts, in order: a
   * success ends the run; the first failure after the last success starts
   * one (or continues the run already there when none succeeded). An
   * endpoint failing for long enough is disabled and its deliveries wait.
   */
  async function recordRun(tx: Tx, webhookId: string, outcomes: FinishedAttempt[], now: Date): Promise<void> {
    const lastSuccess = outcomes.findLastIndex(({ outcome }) => outcome.ok);
    if (lastSuccess >= 0) await tx.run(dispatchStatements.succeeded, [webhookId]);
    const firstFailure = outcomes.slice(lastSuccess + 1)[0];
    if (!firstFailure) return;
    const webhook = await tx.get(dispatchStatements.failed, [webhookId, firstFailure.attemptedAt]);
    const failingSince = webhook ? new Date(webhook.failing_since) : null;
    if (!webhook?.enabled || !shouldDisable(failingSince, now, policy.disableAfterHours)) return;
    const hours = policy.disableAfterHours;
    const reason = `Every delivery failed for ${hours} hour${hours === 1 ? "" : "s"} (since ${failingSince?.toISOString()})`;
    if (await tx.get(dispatchStatements.disable, [webhookId, reason, now])) {
      await tx.run(deliveryStatements.pause, [webhookId]);
      logger.warn({ webhook_id: webhookId, reason }, "webhook disabled");
    }
  }

  return {
    record(attempt) {
      return new Promise<void>((recorded, failed) => {
        queue.push({ ...attempt, recorded, failed });
        if (writing) return;
        writing = true;
        void writeAll();
      });
    },
  };
}
