import type { ServerResponse } from "node:http";
import type { Provider } from "../../db/index.js";
import { AppError } from "../../errors.js";
import { loadShed } from "../../metrics/registry.js";

export interface LoadLimits {
  /** Requests served at once; unset: sized to the database pool (see `defaultInFlight`). */
  maxInFlight?: number;
  /** Requests waiting for a slot; one more is refused at once. */
  maxQueued: number;
  /** How long a request may wait for a slot before it is refused. */
  maxQueueMs: number;
  /** How late the event loop may run, turn after turn, while it is busy all the time. */
  maxEventLoopDelayMs: number;
  /** Long polls waiting at once; they hold no request slot. */
  maxLongPolls: number;
}

/** How often the event loop's punctuality and utilisation are checked. */
const tickMs = 25;
/** The share of time the loop is busy from which it counts as saturated. */
const saturatedUtilisation = 0.9;

/**
 * Whether the event loop is saturated by concurrent work: busy more than
 * 90% of the time since the check before last, and late by more than
 * `maxDelayMs` on both checks. A request that arrives waits in its socket
 * until the loop's turn reaches it, unseen by any count of slots (a SQLite
 * read is short and synchronous, so under a flood of connections no slot is
 * held for long while the requests queue in the sockets): a late loop is
 * such a wait. One busy client, however fast, makes short turns and is
 * never refused; one long task (a first request warming up) is one late
 * check, not two; a loop late while idle is the machine, not this work.
 */
function loopSaturation(maxDelayMs: number) {
  let saturated = false;
  let lateBefore = false;
  let expected = performance.now() + tickMs;
  // Utilisation counters at the last two checks.
  let before = performance.eventLoopUtilization();
  let last = before;
  const tick = () => {
    const now = performance.now();
    const use = performance.eventLoopUtilization();
    const late = now - expected > maxDelayMs;
    saturated = late && lateBefore && performance.eventLoopUtilization(use, before).utilization > saturatedUtilisation;
    lateBefore = late;
    before = last;
    last = use;
    expected = now + tickMs;
    setTimeout(tick, tickMs).unref();
  };
  setTimeout(tick, tickMs).unref();
  return { saturated: () => saturated };
}

/**
 * Slots per process when MAX_IN_FLIGHT is unset. PostgreSQL: twice pg's
 * default pool of 10, so a connection is never idle while a request is
 * between two queries, and no request waits in the pool's own unbounded
 * queue for long. SQLite: one writer and one reader connection, synchronous,
 * so a few requests at once keep both busy and more would only wait.
 */
const defaultInFlight: Record<Provider, number> = { postgresql: 20, sqlite: 8 };

/** The client left (its body never came, or it hung up while waiting): its response will never close again. */
const gone = (res: ServerResponse) => res.destroyed || !res.socket || res.socket.destroyed;

/** One refusal for all: under a flood, capturing a stack per refused request is a cost worth not paying. */
const overloaded = new AppError("unavailable", "The service is overloaded; retry shortly", undefined, {
  "Retry-After": "1",
});

/** A refusal, counted. */
const shed = () => {
  loadShed.inc();
  return overloaded;
};

/** The answer to a request at the door: go on (undefined), a refusal, or the wait for one of these. */
export type Admission = AppError | undefined | Promise<AppError | undefined>;

interface Waiter {
  res: ServerResponse;
  admitted: (refusal: AppError | undefined) => void;
  timer: NodeJS.Timeout;
}

/**
 * Admission control with bounded queueing. A request is served when one of
 * `maxInFlight` slots is free, else waits in line at most `maxQueueMs` (and
 * behind at most `maxQueued` others); otherwise, or while the event loop is
 * saturated (`loopSaturation`), it is refused with 503 + Retry-After. The
 * slots are sized to what the database can do at once, so admitted requests
 * keep a bounded latency under overload and the excess is told at once to
 * come back later, instead of everyone waiting longer and longer. `admit`
 * answers nothing itself: the caller writes the refusal in the format of
 * the route that was hit.
 */
export function admission(limits: LoadLimits, provider: Provider) {
  const maxInFlight = limits.maxInFlight ?? defaultInFlight[provider];
  let inFlight = 0;
  let longPolls = 0;
  const line: Waiter[] = [];
  const loop = loopSaturation(limits.maxEventLoopDelayMs);

  const enter = (res: ServerResponse) => {
    inFlight++;
    res.once("close", release);
  };
  /** A freed slot goes to the longest waiter still there. */
  function release() {
    inFlight--;
    for (let waiter = line.shift(); waiter; waiter = line.shift()) {
      clearTimeout(waiter.timer);
      if (gone(waiter.res)) continue;
      enter(waiter.res);
      waiter.admitted(undefined);
      return;
    }
  }
  const wait = (res: ServerResponse) =>
    new Promise<AppError | undefined>((admitted) => {
      const waiter: Waiter = {
        res,
        admitted,
        timer: setTimeout(() => {
          line.splice(line.indexOf(waiter), 1);
          admitted(shed());
        }, limits.maxQueueMs),
      };
      line.push(waiter);
    });

  return {
    /** Counts the request in until its response closes, once a slot is free; or the refusal. */
    admit(res: ServerResponse): Admission {
      if (loop.saturated() || gone(res)) return shed();
      if (inFlight < maxInFlight && line.length === 0) {
        enter(res);
        return undefined;
      }
      if (line.length >= limits.maxQueued || limits.maxQueueMs === 0) return shed();
      return wait(res);
    },
    /**
     * A long poll waits for work without holding a slot: it counts against
     * its own bound instead, until its response closes.
     */
    admitLongPoll(res: ServerResponse): AppError | undefined {
      if (longPolls >= limits.maxLongPolls || gone(res)) return shed();
      longPolls++;
      res.once("close", () => {
        longPolls--;
      });
      return undefined;
    },
  };
}
