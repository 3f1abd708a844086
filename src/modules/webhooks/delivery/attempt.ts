import type { Database } from "../../../db/index.js";
import type { Logger } from "../../../logger.js";
import type { SecretsCipher } from "../../../secrets/cipher.js";
import type { EventRecord } from "../../events/types.js";
import { type Claim, dispatchStatements as statements } from "./claim-sql.js";
import type { Sender, SendOutcome } from "./http-sender.js";
import type { Recorder } from "./recorder.js";
import { signatureHeaders, webhookBody } from "./signing.js";

export interface AttemptDeps {
  db: Database;
  sender: Sender;
  recorder: Recorder;
  logger: Logger;
}

/** Where and how to send: the webhook's URL and every secret that signs now. */
export interface Target {
  url: string;
  secrets: string[];
  /** Set instead when no message can be signed (the secrets cannot be decrypted). */
  error?: string;
}

export type Decrypt = SecretsCipher["decrypt"];

// Decrypted secrets kept per process at most; past that the memo starts again.
const MEMO_SIZE = 1_000;

/**
 * Decrypts each stored secret once: a ciphertext (bound to its webhook)
 * always opens to the same secret, and AES-GCM per attempt was a visible
 * share of a delivery's CPU. A rotation stores a new ciphertext, so it is
 * never served from here.
 */
export function decryptOnce(cipher: () => SecretsCipher): Decrypt {
  const opened = new Map<string, string>();
  return (sealed, webhookId) => {
    const key = `${webhookId} ${sealed}`;
    let secret = opened.get(key);
    if (secret === undefined) {
      secret = cipher().decrypt(sealed, webhookId);
      if (opened.size >= MEMO_SIZE) opened.clear();
      opened.set(key, secret);
    }
    return secret;
  };
}

/** The webhook's URL and secrets, or undefined when it was deleted (its deliveries went with it). */
export async function loadTarget(db: Database, decrypt: Decrypt, webhookId: string): Promise<Target | undefined> {
  const rows = await db.all(statements.target, [webhookId, new Date()]);
  const url = rows[0]?.url;
  if (url === undefined) return undefined;
  const sealed = rows.flatMap(({ secret }) => (secret === null ? [] : [secret]));
  if (sealed.length === 0) return { url, secrets: [], error: "the webhook has no secret that signs now" };
  try {
    return { url, secrets: sealed.map((secret) => decrypt(secret, webhookId)) };
  } catch (error) {
    // The reason names no secret (SecretDecryptionError); the log tells the operator what to fix.
    return { url, secrets: [], error: error instanceof Error ? error.message : String(error) };
  }
}

/** The event as GET /events shows it (docs/api/events.md): the `data` of the Standard Webhooks body. */
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
 * webhook's run of failures) as long as the claim is still this instance's.
 * `record` is the claimed event, undefined when it is no longer kept.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  claim: Claim,
  claimedUntil: Date,
  target: Target | undefined,
  record: EventRecord | undefined,
): Promise<void> {
  // The webhook was deleted, and its deliveries with it: nothing is left to send or record (the runner says so).
  if (!target) return;
  if (!record) {
    await deps.db.run(statements.giveUp, [claim.id, claimedUntil, "the event is no longer kept", new Date()]);
    return;
  }
  let outcome: SendOutcome;
  const attemptedAt = new Date();
  if (target.error !== undefined) {
    deps.logger.error(
      { webhook_id: claim.webhook_id, delivery_id: claim.id, reason: target.error },
      `webhook secrets cannot be used: ${target.error}`,
    );
    outcome = { ok: false, error: "the webhook's secret cannot be used (see the service's log)", durationMs: 0 };
  } else {
    const event = eventOf(record);
    const body = webhookBody(event);
    const headers = signatureHeaders({ id: event.id, body, secrets: target.secrets, sentAt: attemptedAt });
    outcome = await deps.sender.send(target.url, { body, headers });
  }
  await deps.recorder.record({ claim, claimedUntil, outcome, attemptedAt });
}
