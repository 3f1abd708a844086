import { type Database, statement } from "../../db/index.js";
import type { Logger } from "../../logger.js";
import { type EventMatch, HubSubscriber } from "./hub-subscriber.js";
import { eventsChannel } from "./outbox.js";
import { eventLogHead, readEveryProject } from "./sql.js";
import type { EventRecord } from "./types.js";

// Events read per query when the hub catches up.
const PAGE = 1000;
// When the hub could not read, or PostgreSQL holds back events of a transaction still running.
const RETRY_MS = 1000;
const HELD_BACK_MS = 50;
// While events keep coming, the hub reads at most once in this long: each stream then
// gets what arrived meanwhile as one batch (one write) instead of an event at a time,
// which with hundreds of streams open would cost more than the writes themselves.
// A lone event, after a quiet spell, is read at once.
const BATCH_MS = 50;

// PostgreSQL: whether events exist past `position` that the horizon does not show yet.
const beyond = statement<{ found: boolean }, [position: bigint]>("events_beyond", {
  postgresql: "SELECT EXISTS (SELECT 1 FROM events WHERE id > $1) AS found",
});

/**
 * The process's one reader of the event log for its streams. It listens to
 * the events channel (LISTEN on PostgreSQL, whichever instance committed;
 * on SQLite this process's commits and, through the database's own watch,
 * other processes'), and on each notification reads the new events once,
 * from the table, and offers them to every subscriber. Streams cost no query
 * of their own while they keep up, however many are open.
 */
export class EventHub {
  private readonly subscribers = new Set<HubSubscriber>();
  private position = 0n;
  private listening: (() => void) | undefined;
  private idle = true;
  private ready: Promise<void> = Promise.resolve();
  private serial: Promise<void> = Promise.resolve();
  private scheduled = false;
  private lastRead = Number.NEGATIVE_INFINITY;
  private retry: NodeJS.Timeout | undefined;
  /** Streams open on this process (MAX_STREAMS counts them). */
  open = 0;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
  ) {}

  /**
   * Registers a subscriber and resolves with the hub's position: every event
   * with a larger id is offered to it, and every event up to the position was
   * visible to readers before this resolved.
   */
  async subscribe(match: EventMatch): Promise<{ subscription: HubSubscriber; position: bigint }> {
    const subscription = new HubSubscriber(match, (leaving) => this.subscribers.delete(leaving));
    this.subscribers.add(subscription);
    if (this.idle) {
      this.idle = false;
      this.listening ??= this.db.listen(eventsChannel, () => this.wake());
      this.ready = this.exclusive(async () => {
        this.position = await eventLogHead(this.db);
      });
    }
    try {
      await this.ready;
      // After whatever read is under way: it may offer events up to the position it reaches.
      await this.exclusive(async () => {});
    } catch (error) {
      subscription.close();
      this.idle = this.subscribers.size === 0;
      throw error;
    }
    return { subscription, position: this.position };
  }

  private exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.serial.then(work);
    this.serial = next.catch(() => {});
    return next;
  }

  /**
   * A notification: read once more, after the read under way if any, and not
   * sooner than BATCH_MS after the last read (many notifications, one read).
   */
  private wake(): void {
    if (this.scheduled || this.idle) return;
    this.scheduled = true;
    const wait = this.lastRead + BATCH_MS - performance.now();
    if (wait > 0) setTimeout(() => this.read(), wait).unref();
    else this.read();
  }

  private read(): void {
    void this.exclusive(async () => {
      this.scheduled = false;
      this.lastRead = performance.now();
      if (this.subscribers.size === 0) {
        // Nobody to feed: the position is found again when someone subscribes.
        this.idle = true;
        return;
      }
      try {
        await this.catchUp();
      } catch (error) {
        this.logger.warn({ err: error }, "reading new events failed; trying again shortly");
        this.later(RETRY_MS);
      }
    });
  }

  private async catchUp(): Promise<void> {
    for (;;) {
      const page = await readEveryProject(this.db, this.position, PAGE);
      const last = page.at(-1);
      if (last) {
        this.position = last.id;
        // Subscribers with the same filters are handed the same array: each layer
        // down to the socket makes what it sends from it once for all of them.
        const matching = new Map<string, readonly EventRecord[]>();
        for (const subscriber of this.subscribers) {
          let events = matching.get(subscriber.filterKey);
          if (!events) {
            events = subscriber.select(page);
            matching.set(subscriber.filterKey, events);
          }
          subscriber.offer(events);
        }
      }
      if (page.length < PAGE) break;
    }
    // A transaction still running on PostgreSQL holds back the events committed after it began:
    // they will be readable when it ends, which may bring no notification of its own.
    if (this.db.provider === "postgresql" && (await this.db.get(beyond, [this.position]))?.found) {
      this.later(HELD_BACK_MS);
    }
  }

  private later(ms: number): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.wake();
    }, ms);
    this.retry.unref();
  }
}

const hubs = new WeakMap<Database, EventHub>();

/** The hub of `db`: one per database per process. */
export function eventHubOf(db: Database, logger: Logger): EventHub {
  let hub = hubs.get(db);
  if (!hub) {
    hub = new EventHub(db, logger);
    hubs.set(db, hub);
  }
  return hub;
}
