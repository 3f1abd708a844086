import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
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
  /** Long polls waiting at once; they hold no request slot. */
  maxLongPolls: number;
}

/** How often the event loop's utilisation is checked. */
const tickMs = 25;
/** The share of time the loop is busy from which it counts as saturated. */
const saturatedUtilisation = 0.9;
/** The window over which connections with requests, and the requests read, are counted. */
const windowMs = 1000;

/**
 * Whether the event loop is saturated by concurrent work: busy more than
 * 90% of the time since the last check (every 25 ms), while a request
 * would wait longer than `promiseMs` in its socket. That wait is the
 * connections with requests (those that sent one in the last second or so
 * and are still open) over the requests read per millisecond in that time
 * (Little's law, as each connection sends its next request once answered).
 * A request waits in its socket until the loop's turn reaches it, unseen by
 * any count of slots: a SQLite read is short and synchronous, so under a
 * flood of connections no slot is held for long while the requests queue
 * in the sockets. Refusing sends clients away for a while, so the loop gets
 * idle time back at once.
 * - A connection that closed waits for nothing: one client sending request
 *   after request, each on a new connection, is one connection at a time.
 * - No more connections than `held` (the slots and the line) can each wait
 *   there, seen by the line's deadline, and are never a flood: with few
 *   connections, requests read per millisecond say how often they send, not
 *   how fast they are served (without this floor, a service with two
 *   clients and a loop kept busy by other work refused them: see
 *   test/unavailable-formats.test.ts).
 * - A loop that is merely late (a machine short of CPU, one long task) is
 *   not overload: lateness alone refused a single client's requests on a
 *   loaded machine.
 */
function loopSaturation(promiseMs: number, held: number) {
  let saturated = false;
  let last = performance.eventLoopUtilization();
  // Connections with requests, and requests read, in the window under way and the one before.
  let current = new Set<Socket>();
  let previous = new Set<Socket>();
  let read = 0;
  let readBefore = 0;
  let windowStart = performance.now();
  const forget = function (this: Socket) {
    current.delete(this);
    previous.delete(this);
  };
  const roll = (now: number) => {
    if (now - windowStart < windowMs) return;
    // A window with no request in it (an idle service) leaves nothing behind.
    const idle = now - windowStart >= 2 * windowMs;
    previous = idle ? new Set() : current;
    readBefore = idle ? 0 : read;
    current = new Set();
    read = 0;
    windowStart = now;
  };
  const tick = () => {
    const now = performance.now();
    roll(now);
    const use = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(use, last).utilization > saturatedUtilisation;
    last = use;
    const connections = Math.max(current.size, previous.size);
    const perMs = (read + readBefore) / (now - windowStart + (readBefore > 0 ? windowMs : 0));
    saturated = busy && connections > held && connections / perMs > promiseMs;
    setTimeout(tick, tickMs).unref();
  };
  setTimeout(tick, tickMs).unref();
  return {
    /** Counts a request read from `socket`; whether the loop is saturated. */
    saturated(socket: Socket | null): boolean {
      roll(performance.now());
      read++;
      if (socket && !current.has(socket)) {
        if (!previous.has(socket)) socket.once("close", forget);
        current.add(socket);
      }
      return saturated;
    },
  };
}

/**
 * Slots per process when MAX_IN_FLIGHT is unset. PostgreSQL: twice pg's
 * default pool of 10, so a connection is never idle while a request is
 * between two queries, and no request waits in the pool's own unbounded
 * queue for long. SQLite: reads are synchronous, so they hold a slot only
 * for their own turn of the loop; a write holds one while it waits for the
 * write lock without using the loop, and the writes waiting together share
 * one commit. With 8, two processes taking turns at the lock under 32
 * connections of creates kept requests in line past MAX_QUEUE_MS (88 of
 * about 1,900 refused); with 32, a few dozen clients never wait in line.
 */
const defaultInFlight: Record<Provider, number> = { postgresql: 20, sqlite: 32 };

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
  const loop = loopSaturation(limits.maxQueueMs, maxInFlight + limits.maxQueued);

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
      if (loop.saturated(res.socket) || gone(res)) return shed();
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
