import type { Config } from "../../../config.js";
import type { Database } from "../../../db/index.js";
import type { Logger } from "../../../logger.js";
import { cipherFor } from "../../../secrets/cipher.js";
import { deliveriesChannel, feedChannel } from "../sql.js";
import { feed, feedBatch } from "./feeder.js";
import { createSender } from "./http-sender.js";
import { createPacer } from "./pacer.js";
import { startDispatcher } from "./runner.js";

// An event notification is followed by one more feed this much later: on PostgreSQL an event
// committed while an older transaction was still open becomes readable only once that one ends,
// which notifies nobody.
const FOLLOW_UP_MS = 1_000;
const RETRY_MS = 1_000;
// Feeds start at most this often: while events keep coming, each feed takes what arrived since the last in one transaction.
const FEED_INTERVAL_MS = 25;

export interface WebhookDelivery {
  /** Stops feeding and claiming; attempts in flight finish and are recorded first. */
  stop(): Promise<void>;
}

/**
 * Webhook delivery in this process (docs/api/webhooks.md): the feeder turns new events
 * into deliveries when channel `events` says there are some, and the
 * dispatcher sends what is due. Every instance runs both; the database
 * decides who does what, so nothing is delivered twice at once or lost.
 */
export function startWebhookDelivery({
  db,
  config,
  logger,
}: {
  db: Database;
  config: Config;
  logger: Logger;
}): WebhookDelivery {
  const settings = config.webhooks;
  const sender = createSender({ allowPrivate: settings.allowPrivate, timeoutMs: settings.timeoutMs });
  const dispatcher = startDispatcher({
    db,
    sender,
    cipher: () => cipherFor(config),
    policy: { retrySchedule: settings.retrySchedule, disableAfterHours: settings.disableAfterHours },
    logger,
    concurrency: settings.concurrency,
    maxPerSecond: settings.maxAttemptsPerSecond,
    // Longer than the send's timeout plus recording it; after a crash the delivery is due again then.
    claimMs: 2 * settings.timeoutMs + 5_000,
  });

  let stopped = false;
  // No webhook enabled: events are not read until one joins the feed (channel feedChannel).
  let idle = false;
  let followUp: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;

  async function feedAll(): Promise<void> {
    try {
      for (;;) {
        const round = await feed(db);
        idle = round.idle;
        if (round.deliveries > 0) dispatcher.wake();
        if (round.events < feedBatch || stopped) break;
      }
    } catch (error) {
      logger.warn({ err: error }, "feeding webhook deliveries failed; trying again shortly");
      clearTimeout(retry);
      retry = setTimeout(feeds.request, RETRY_MS);
      retry.unref();
    }
  }
  const feeds = createPacer(feedAll, FEED_INTERVAL_MS);

  const stopEvents = db.listen("events", () => {
    if (idle) return;
    feeds.request();
    if (followUp || stopped) return;
    followUp = setTimeout(() => {
      followUp = undefined;
      feeds.request();
    }, FOLLOW_UP_MS);
    followUp.unref();
  });
  const stopJoins = db.listen(feedChannel, () => {
    idle = false;
    feeds.request();
  });
  const stopDeliveries = db.listen(deliveriesChannel, () => dispatcher.wake());
  feeds.request();

  return {
    async stop() {
      stopped = true;
      stopEvents();
      stopJoins();
      stopDeliveries();
      clearTimeout(followUp);
      clearTimeout(retry);
      await feeds.stop();
      await dispatcher.stop();
      await sender.close();
    },
  };
}
