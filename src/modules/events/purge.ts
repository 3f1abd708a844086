import { setTimeout as sleep } from "node:timers/promises";
import { type Database, type Queryable, statement } from "../../db/index.js";
import { readHorizon as horizon } from "../../db/log-order.js";
import type { Logger } from "../../logger.js";

// Small batches, each its own short transaction, with a pause between them:
// writers (and, on SQLite, every other process) never wait long behind a purge.
const BATCH = 500;
const PAUSE_MS = 20;
// How often the log is looked at for events past their retention.
const EVERY_MS = 60_000;

const purgedCursor = "events:purged_through";

// Readers of the log that turn events into work (webhook delivery's feeder)
// keep their position in outbox_cursors, named `<reader>:feed`; other rows
// there are counters of other kinds. The purge never passes the slowest
// reader. A reader's cursor only moves forward, or is dropped and made again
// at the log's head, so an event at or below the position read here has
// still been passed when it is deleted. With no reader, age alone decides.
const largestBigint = 2n ** 63n - 1n;
const readThrough = `COALESCE((SELECT MIN(position) FROM outbox_cursors WHERE name LIKE '%:feed'), ${largestBigint})`;

// The oldest events every reader has passed, in id order; on PostgreSQL
// only those below the readers' horizon, so no event with a smaller id can
// commit after the purge.
const oldestEvents = statement<{ id: bigint; occurred_at: string }, [limit: number]>("events_purge_candidates", {
  sqlite: `SELECT id, occurred_at FROM events WHERE id <= ${readThrough} ORDER BY id LIMIT $1`,
  postgresql: `SELECT id, occurred_at FROM events WHERE id <= ${readThrough} AND id < ${horizon} ORDER BY id LIMIT $1`,
});
const deleteThrough = statement<unknown, [through: bigint]>("events_purge", "DELETE FROM events WHERE id <= $1");
const recordPurged = statement<unknown, [through: bigint]>(
  "events_purged_record",
  `INSERT INTO outbox_cursors (name, position) VALUES ('${purgedCursor}', $1)
    ON CONFLICT (name) DO UPDATE SET position = excluded.position WHERE outbox_cursors.position < excluded.position`,
);
const purgedPosition = statement<{ position: bigint }>(
  "events_purged_through",
  `SELECT position FROM outbox_cursors WHERE name = '${purgedCursor}'`,
);
const oldestKept = statement<{ id: bigint }>("events_oldest_kept", "SELECT id FROM events ORDER BY id LIMIT 1");

/**
 * The largest id purged so far (0 when none was): a reader resuming below it
 * has missed events. The log is only ever purged from its start, so every
 * event above this id that was ever visible is still there.
 */
export async function purgedThrough(db: Queryable): Promise<bigint> {
  return (await db.get(purgedPosition, []))?.position ?? 0n;
}

/** The id of the oldest event kept, or undefined when the log is empty. */
export async function oldestEventId(db: Queryable): Promise<bigint | undefined> {
  const row = await db.get(oldestKept, []);
  return row ? BigInt(row.id) : undefined;
}

/**
 * Deletes, from the start of the log, the events that occurred before
 * `cutoff` and that the webhook feeder has passed, one batch per transaction;
 * stops at the first event to keep. Returns how many were deleted.
 */
export async function purgeEvents(db: Database, cutoff: Date, signal?: AbortSignal): Promise<number> {
  let deleted = 0;
  while (!signal?.aborted) {
    const candidates = await db.all(oldestEvents, [BATCH]);
    const expired = candidates.findIndex((event) => Date.parse(event.occurred_at) >= cutoff.getTime());
    const prefix = expired === -1 ? candidates : candidates.slice(0, expired);
    const last = prefix.at(-1);
    if (!last) break;
    deleted += await db.transaction(async (tx) => {
      const count = await tx.run(deleteThrough, [last.id]);
      await tx.run(recordPurged, [last.id]);
      return count;
    });
    if (prefix.length < candidates.length || candidates.length < BATCH) break;
    await sleep(PAUSE_MS);
  }
  return deleted;
}

export interface EventPurger {
  stop(): Promise<void>;
}

/** Purges events older than `retentionMs` now and every minute after, in every instance (purging twice is harmless). */
export function startEventPurger({
  db,
  retentionMs,
  logger,
}: {
  db: Database;
  retentionMs: number;
  logger: Logger;
}): EventPurger {
  const stopped = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const run = () => {
    running = purgeEvents(db, new Date(Date.now() - retentionMs), stopped.signal).then(
      (count) => {
        if (count > 0) logger.info({ events: count }, "purged events past their retention");
      },
      (error: unknown) => logger.warn({ err: error }, "purging old events failed; trying again later"),
    );
    void running.finally(() => {
      if (stopped.signal.aborted) return;
      timer = setTimeout(run, EVERY_MS);
      timer.unref();
    });
  };
  run();
  return {
    async stop() {
      stopped.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
