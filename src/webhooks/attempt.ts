import { randomUUID } from "node:crypto";
import type { Database } from "../db/index.js";
import type { EventRecord } from "../events/types.js";
import type { Logger } from "../logger.js";
import { webhookDeliveries } from "../metrics/registry.js";
import { deliveryStatements } from "./delivery-rows.js";
import { type Claim, dispatchStatements as statements } from "./dispatch-rows.js";
import { nextAttemptAt, shouldDisable } from "./schedule.js";
import type { SecretsCipher } from "./secrets.js";
import type { Sender, SendOutcome } from "./sender.js";
import { signatureHeaders, webhookBody } from "./signing.js";
import { webhookStatements } from "./webhook-rows.js";

export interface AttemptPolicy {
  retrySchedule: readonly number[];
  disableAfterHours: number;
}

export interface AttemptDeps {
  db: Database;
  sender: Sender;
  policy: AttemptPolicy;
  logger: Logger;
}

/** Where and how to send: the webhook's URL and every secret that signs now. */
export interface Target {
  url: string;
  secrets: string[];
  /** Set instead when no message can be signed (the secrets cannot be decrypted). */
  error?: string;
}

export async function loadTarget(db: Database, cipher: SecretsCipher, webhookId: string): Promise<Target | undefined> {
  const webhook = await db.get(statements.target, [webhookId]);
  if (!webhook) return undefined;
  const sealed = await db.all(webhookStatements.validSecrets, [webhookId, new Date()]);
  try {
    return { url: webhook.url, secrets: sealed.map(({ secret }) => cipher.decrypt(secret, webhookId)) };
  } catch (error) {
    // The reason names no secret (SecretDecryptionError); the log tells the operator what to fix.
    return { url: webhook.url, secrets: [], error: error instanceof Error ? error.message : String(error) };
  }
}

/** The event as GET /events shows it (SPEC §12.1): the `data` of the Standard Webhooks body. */
const eventOf = (record: EventRecord) => ({
  id: String(record.id),
  type: record.type,
  occurred_at: record.occurred_at,
  agent_id: record.agent_id,
  task_id: record.task_id,
  data: JSON.parse(record.data) as unknown,
});

/**
 * One attempt of a claimed delivery: sent with every valid secret's
 * signature, then recorded (the attempt, the delivery's new state, the
 * webhook's run of failures) in one transaction, as long as the claim is
 * still this instance's.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  claim: Claim,
  claimedUntil: Date,
  target: Target | undefined,
): Promise<void> {
  const { db } = deps;
  const record = await db.get(statements.event, [claim.event_id]);
  if (!record || !target) {
    const why = record ? "the webhook was deleted" : "the event is no longer kept";
    await db.run(statements.giveUp, [claim.id, claimedUntil, why, new Date()]);
    return;
  }
  let outcome: SendOutcome;
  const attemptedAt = new Date();
  if (target.error || target.secrets.length === 0) {
    deps.logger.error({ webhook_id: claim.webhook_id, reason: target.error }, "webhook secrets cannot be used");
    outcome = { ok: false, error: "the webhook's secret cannot be used (see the service's log)", durationMs: 0 };
  } else {
    const event = eventOf(record);
    const body = webhookBody(event);
    const headers = signatureHeaders({ id: event.id, body, secrets: target.secrets, sentAt: attemptedAt });
    outcome = await deps.sender.send(target.url, { body, headers });
  }
  await recordOutcome(deps, claim, claimedUntil, outcome, attemptedAt);
}

async function recordOutcome(
  { db, policy, logger }: AttemptDeps,
  claim: Claim,
  claimedUntil: Date,
  outcome: SendOutcome,
  attemptedAt: Date,
): Promise<void> {
  const now = new Date();
  const next = outcome.ok ? undefined : nextAttemptAt(policy.retrySchedule, claim.attempts + 1, now);
  const status = outcome.ok ? "succeeded" : next ? "pending" : "failed";
  const statusCode = outcome.statusCode ?? null;
  const error = outcome.error ?? null;
  const recorded = await db.transaction(async (tx) => {
    const finished = await tx.get(statements.finish, [
      claim.id,
      claimedUntil,
      status,
      next ?? null,
      statusCode,
      error,
      outcome.durationMs,
      now,
    ]);
    // The claim ran out and another instance took the delivery, or the webhook was deleted.
    if (!finished) return false;
    await tx.run(statements.insertAttempt, [
      randomUUID(),
      claim.id,
      attemptedAt,
      statusCode,
      error,
      outcome.durationMs,
    ]);
    if (outcome.ok) {
      await tx.run(statements.succeeded, [claim.webhook_id]);
      return true;
    }
    const webhook = await tx.get(statements.failed, [claim.webhook_id, attemptedAt]);
    const failingSince = webhook ? new Date(webhook.failing_since) : null;
    if (!webhook?.enabled || !shouldDisable(failingSince, now, policy.disableAfterHours)) return true;
    const hours = policy.disableAfterHours;
    const reason = `Every delivery failed for ${hours} hour${hours === 1 ? "" : "s"} (since ${failingSince?.toISOString()})`;
    if (await tx.get(statements.disable, [claim.webhook_id, reason, now])) {
      await tx.run(deliveryStatements.pause, [claim.webhook_id]);
      logger.warn({ webhook_id: claim.webhook_id, reason }, "webhook disabled");
    }
    return true;
  });
  // Counted once committed: succeeded, pending (a retry is scheduled) or failed (no retry left).
  if (recorded) webhookDeliveries.inc({ outcome: status });
  logger.debug(
    { webhook_id: claim.webhook_id, delivery_id: claim.id, status, status_code: statusCode, error },
    "webhook delivery attempt",
  );
}
