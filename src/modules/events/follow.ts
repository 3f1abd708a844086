import type { Database } from "../../db/index.js";
import { AppError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { eventStreamsOpen } from "../../metrics/registry.js";
import { eventHubOf } from "./hub.js";
import type { EventMatch } from "./hub-subscriber.js";
import { oldestEventId, purgedThrough } from "./purge.js";
import { readEvents } from "./sql.js";
import type { EventRecord } from "./types.js";

// Events per query while a stream replays from the table.
const REPLAY_PAGE = 500;
// How long a client is asked to wait before it comes back, when every stream slot is taken.
const RETRY_AFTER_SECONDS = "5";

/** What a stream sends: an event, the notice that events were purged before the client read them, or a sign of life. */
export type StreamItem =
  /** Events in id order: as many as arrived together, so a stream writes them at once. */
  | { kind: "events"; events: readonly EventRecord[] }
  /** Events up to `through` were purged before the client read them; the stream goes on from `oldestId`. */
  | { kind: "gap"; oldestId: bigint | undefined; through: bigint }
  | { kind: "keep-alive" }
  /**
   * The stream holds its place in the log: an event committed from now on reaches it. First of
   * all, so a client that writes once it saw the stream's first message never misses that write.
   */
  | { kind: "subscribed" };

export interface FollowOptions extends EventMatch {
  db: Database;
  logger: Logger;
  /** Resume after this id; undefined for new events only. */
  after: bigint | undefined;
  maxStreams: number;
  /** Longest silence before a keep-alive item. */
  keepAliveMs: number;
  /** Ends the stream: the client left, or the service is shutting down. */
  signal: AbortSignal;
}

/**
 * The events a stream sends, as an async iterable (docs/api/events.md): the kept
 * events after `after` read from the table, then new ones as the process's
 * hub offers them. The replay starts only once the hub feeds this stream, and
 * an offered event is sent only when its id is beyond the last one sent: no
 * gap and no duplicate where the replay meets the live events. A stream that
 * falls too far behind reads the table again the same way.
 *
 * The slot of MAX_STREAMS is taken here, before anything is sent, so a
 * stream over the bound is refused with 503 rather than cut short.
 */
export function followEvents(options: FollowOptions): AsyncIterable<StreamItem> {
  const hub = eventHubOf(options.db, options.logger);
  if (hub.open >= options.maxStreams) {
    throw new AppError("unavailable", "Too many event streams are open; retry shortly", undefined, {
      "Retry-After": RETRY_AFTER_SECONDS,
    });
  }
  hub.open++;
  eventStreamsOpen.inc();
  let released = false;
  const release = () => {
    if (!released) {
      hub.open--;
      eventStreamsOpen.dec();
    }
    released = true;
  };
  const items = stream(options, hub);
  // A stream never started still gives its slot back when it is closed.
  return {
    [Symbol.asyncIterator]: () => ({
      next: () =>
        items.next().then((result) => {
          if (result.done) release();
          return result;
        }),
      return: async (value?: unknown) => {
        release();
        return items.return(value as undefined);
      },
    }),
  };
}

async function* stream(
  { db, after, projectId, agentId, types, keepAliveMs, signal }: FollowOptions,
  hub: ReturnType<typeof eventHubOf>,
): AsyncGenerator<StreamItem, undefined> {
  const { subscription, position } = await hub.subscribe({ projectId, agentId, types });
  try {
    yield { kind: "subscribed" };
    let last = after ?? position;
    let replay = after !== undefined;
    while (!signal.aborted) {
      if (replay || subscription.overflowed) {
        subscription.overflowed = false;
        subscription.take();
        const purged = await purgedThrough(db);
        if (last < purged) {
          yield { kind: "gap", oldestId: await oldestEventId(db), through: purged };
          last = purged;
        }
        for (;;) {
          const page = await readEvents(db, { projectId, after: last, limit: REPLAY_PAGE, agentId, types });
          const lastOfPage = page.at(-1);
          if (signal.aborted) return;
          if (lastOfPage) {
            yield { kind: "events", events: page };
            last = lastOfPage.id;
          }
          if (page.length < REPLAY_PAGE) break;
        }
        replay = false;
      }
      const sent = last;
      const taken = subscription.take();
      // Kept as it is when it can be: the same array as other streams', whose frames are made once.
      const fresh = (taken[0]?.id ?? 0n) > sent ? taken : taken.filter((event) => event.id > sent);
      const lastFresh = fresh.at(-1);
      if (lastFresh) {
        if (signal.aborted) return;
        yield { kind: "events", events: fresh };
        last = lastFresh.id;
      }
      if (subscription.overflowed) continue;
      if (!(await subscription.wait(keepAliveMs, signal)) && !signal.aborted) yield { kind: "keep-alive" };
    }
  } finally {
    subscription.close();
  }
}
