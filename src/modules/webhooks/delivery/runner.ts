import type { Database } from "../../../db/index.js";
import type { Logger } from "../../../logger.js";
import type { SecretsCipher } from "../../../secrets/cipher.js";
import type { EventRecord } from "../../events/types.js";
import { attemptDelivery, decryptOnce, loadTarget, type Target } from "./attempt.js";
import { createAttemptRate } from "./attempt-rate.js";
import { byWebhook, deletedWebhookMessage } from "./by-webhook.js";
import { type Claim, dispatchStatements as statements } from "./claim-sql.js";
import type { Sender } from "./http-sender.js";
import { createLimiter } from "./limiter.js";
import { createPacer } from "./pacer.js";
import { createRecorder, type RecordPolicy } from "./recorder.js";

// With nothing due, look again this often anyway (a safety net, not a poll).
const LONGEST_SLEEP_MS = 3_600_000;
// After a failure (the database unreachable), or when due work could not be claimed, look again after this long.
const RETRY_MS = 1_000;
// Looks for due work start at most this often: while attempts keep ending, each look claims what room
// they left since the last one in one statement, instead of one claim per ended attempt.
const PUMP_INTERVAL_MS = 25;

export interface DispatcherOptions {
  db: Database;
  sender: Sender;
  /** Called at the first delivery: a key file is read (or made) only when there is something to sign. */
  cipher: () => SecretsCipher;
  policy: RecordPolicy;
  logger: Logger;
  /** Attempts at once in this process, and per endpoint. */
  concurrency: { total: number; perEndpoint: number };
  /** Attempts started per second at most in this process (0: unbounded), so delivery leaves the API its share of the CPU. */
  maxPerSecond: number;
  /** How long a claim lasts: longer than any attempt (send + record), so only a crash lets one lapse. */
  claimMs: number;
}

export interface Dispatcher {
  /** Look for due deliveries now (a notification, a feed, a finished attempt). */
  wake(): void;
  /** Claims nothing more and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>;
  readonly inFlight: number;
}

/**
 * Sends due deliveries, in every process: claims as many as it has room for
 * (per endpoint and in total), runs each attempt, and looks again when an
 * attempt ends, when woken, or when the next retry is due. Nothing runs
 * while nothing is due: one timer for the earliest due time.
 */
export function startDispatcher(options: DispatcherOptions): Dispatcher {
  const { db, logger, concurrency } = options;
  const limiter = createLimiter({ total: concurrency.total, perKey: concurrency.perEndpoint });
  const deps = { ...options, recorder: createRecorder(options) };
  const rate = createAttemptRate(options.maxPerSecond);
  const decrypt = decryptOnce(options.cipher);
  const running = new Map<string, number>();
  const attempts = new Set<Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const setTimer = (delayMs: number) => {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(wake, Math.min(Math.max(delayMs, 0), LONGEST_SLEEP_MS));
    timer.unref();
  };

  function startAttempt(claim: Claim, until: Date, target: Promise<Target | undefined>, record?: EventRecord) {
    running.set(claim.webhook_id, (running.get(claim.webhook_id) ?? 0) + 1);
    const attempt = limiter
      .run(claim.webhook_id, async () => attemptDelivery(deps, claim, until, await target, record))
      .catch((error: unknown) => {
        // Unrecorded: the claim runs out and the delivery is due again.
        logger.warn({ err: error, delivery_id: claim.id }, "a webhook delivery attempt could not be recorded");
      })
      .finally(() => {
        const left = (running.get(claim.webhook_id) ?? 1) - 1;
        if (left === 0) running.delete(claim.webhook_id);
        else running.set(claim.webhook_id, left);
        attempts.delete(attempt);
        wake();
      });
    attempts.add(attempt);
  }

  /** Claims and starts what there is room for; true when it should look again at once. */
  async function claimDue(): Promise<boolean> {
    const room = Math.min(concurrency.total - limiter.running, rate.available());
    if (room <= 0) return false;
    const full = [...running].filter(([, count]) => count >= concurrency.perEndpoint).map(([id]) => id);
    const now = new Date();
    const candidates = await db.all(statements.candidates, [
      now,
      room,
      JSON.stringify(full),
      // No endpoint can take more than its share at once.
      Math.min(room, concurrency.perEndpoint),
    ]);
    const counts = new Map(running);
    const picked: string[] = [];
    for (const { id, webhook_id: webhookId } of candidates) {
      if (picked.length >= room) break;
      const count = counts.get(webhookId) ?? 0;
      if (count >= concurrency.perEndpoint) continue;
      counts.set(webhookId, count + 1);
      picked.push(id);
    }
    if (picked.length === 0) return false;
    const until = new Date(now.getTime() + options.claimMs);
    const claimed = await db.all(statements.claim, [JSON.stringify(picked), until, now]);
    rate.take(claimed.length);
    // None claimed: another instance took them (or holds them for a moment); the timer looks again.
    if (claimed.length === 0) return false;
    // One read of the claimed events for the whole batch.
    const events = await db.all(statements.events, [JSON.stringify(claimed.map(({ event_id }) => String(event_id)))]);
    const eventById = new Map(events.map((event) => [event.id, event]));
    // One look-up of URL and secrets per endpoint for the whole batch.
    for (const [webhookId, claims] of byWebhook(claimed, (claim) => claim.webhook_id)) {
      const target = loadTarget(db, decrypt, webhookId);
      // Awaited by each attempt; a failure there is that attempt's to report.
      target.then(
        (found) => {
          if (!found) logger.info({ webhook_id: webhookId, deliveries: claims.length }, deletedWebhookMessage);
        },
        () => {},
      );
      for (const claim of claims) startAttempt(claim, until, target, eventById.get(claim.event_id));
    }
    return true;
  }

  async function armTimer(): Promise<void> {
    const next = await db.get(statements.nextDue, []);
    if (!next) return setTimer(LONGEST_SLEEP_MS);
    const delay = Date.parse(next.due) - Date.now();
    if (delay <= 0) {
      // Due already but not claimable here: the rate allows no more yet, every slot is busy (a finished
      // attempt wakes us), or another instance has it.
      if (rate.available() < 1) return setTimer(rate.msUntilNext());
      return limiter.running >= concurrency.total ? undefined : setTimer(RETRY_MS);
    }
    setTimer(delay);
  }

  async function pump(): Promise<void> {
    try {
      while (!stopped && (await claimDue()));
      if (!stopped) await armTimer();
    } catch (error) {
      logger.warn({ err: error }, "looking for due webhook deliveries failed; trying again shortly");
      setTimer(RETRY_MS);
    }
  }

  const pumps = createPacer(pump, PUMP_INTERVAL_MS);
  const wake = pumps.request;

  wake();
  return {
    wake,
    get inFlight() {
      return attempts.size;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pumps.stop();
      while (attempts.size > 0) await Promise.all([...attempts]);
    },
  };
}
