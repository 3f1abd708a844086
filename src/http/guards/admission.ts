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
  /** Event-loop delay beyond which, seen twice in a row, new requests are refused. */
  maxEventLoopDelayMs: number;
  /** Long polls waiting at once; they hold no request slot. */
  maxLongPolls: number;
}

/** How often the event loop's punctuality is checked. */
const lagTickMs = 50;

/**
 * Whether the event loop is late all the time: the last two checks each came
 * more than `maxDelayMs` late. A process busy parsing more requests than it
 * can serve is late on every turn, and requests wait in its sockets where no
 * count of slots can see them; refusing new ones then is what keeps the
 * admitted ones fast. A single long task (a first request warming up) is
 * one late check, not overload.
 */
function eventLoopLag(maxDelayMs: number) {
  let lateTicks = 0;
  let expected = performance.now() + lagTickMs;
  const tick = () => {
    const now = performance.now();
    lateTicks = now - expected > maxDelayMs ? lateTicks + 1 : 0;
    expected = now + lagTickMs;
    setTimeout(tick, lagTickMs).unref();
  };
  setTimeout(tick, lagTickMs).unref();
  return { lagging: () => lateTicks >= 2 };
}

/** How long the window is over which connections and requests are counted to tell a flood. */
const floodWindowMs = 1000;
/** The share of time the loop may be busy during a flood before new requests are refused. */
const busyShare = 0.9;
/** The shortest window over which that share is measured. */
const busyWindowMs = 25;
/** Connections sending requests within one window below which there is no flood, however slow they are served. */
const floodConnections = 256;
/**
 * Connections sending requests again and again (at least two each within a
 * flood window) from which turns are limited (`loopTurn`). With fewer, few
 * sockets can be ready in one turn, and limiting would only hold back
 * requests behind slow ones. Measured: limiting every turn sent two to
 * three times as many requests past `MAX_QUEUE_MS` (503) with two SQLite
 * workers and 32 connections of POSTs; limiting from 64 connections,
 * whatever their requests, refused 13–21 of a burst of 100 logins on one
 * connection each (their five password checks hold slots while the refusals
 * wait for the rest) on a busy machine.
 */
const busyConnections = 64;
/** Marks a connection with the window in which it last sent a request. */
const lastWindow = Symbol("floodWindow");

/**
 * Whether a flood of connections keeps the event loop saturated. Node reads
 * every socket that has data in each turn of its loop, and a SQLite read is
 * short and synchronous: under a flood of connections no slot is held for
 * long while requests wait in the sockets, unseen by any count of slots.
 * A saturated loop also starves new connections, which then wait in the
 * listen queue for seconds (measured: a bare node:http server at 1,000 busy
 * connections accepts a few a second). So the guard estimates how long a
 * request waits: the connections that sent requests in the last second
 * and are still open, divided by the requests read (Little's law, as each
 * connection sends its next request once answered), once more than 256
 * such connections sent requests in it. A connection that closed waits for
 * nothing: one client sending request after request, each on a new
 * connection, is one connection at a time, not a flood (counting every
 * connection seen refused 4,745 of 5,000 such requests; see
 * test/admission-clients.test.ts). While that is more than `floodWaitMs`, new
 * requests are refused whenever the loop was busy more than 90% of the last
 * few tens of milliseconds: refusing sends clients away for a while, so the
 * loop gets idle time back at once, and admitted requests and new
 * connections keep a bounded wait. A loop kept busy by a few dozen
 * connections (a benchmark) waits a few milliseconds, so is never refused
 * for this.
 */
function floodGuard(floodWaitMs: number) {
  let window = 0;
  let windowStart = performance.now();
  let connections = 0;
  let reads = 0;
  let lastBusy = false;
  let estimate = 0;
  let busyStart = windowStart;
  let busyUse = performance.eventLoopUtilization();
  let busy = false;
  /** A connection that closed waits for nothing: it leaves the count of the window under way. */
  const forget = function (this: Socket & { [lastWindow]?: number }) {
    if (this[lastWindow] === window) connections--;
  };
  const busyLately = (now: number) => {
    if (now - busyStart >= busyWindowMs) {
      const use = performance.eventLoopUtilization();
      busy = performance.eventLoopUtilization(use, busyUse).utilization > busyShare;
      busyUse = use;
      busyStart = now;
    }
    return busy;
  };
  return {
    /** Counts a request read from `socket`; whether it must be refused. */
    refuses(socket: (Socket & { [lastWindow]?: number }) | null): boolean {
      const now = performance.now();
      const elapsed = now - windowStart;
      if (elapsed >= floodWindowMs) {
        estimate = connections >= floodConnections ? (connections / reads) * elapsed : 0;
        lastBusy = connections >= busyConnections && reads >= 2 * connections;
        window++;
        windowStart = now;
        connections = 0;
        reads = 0;
      }
      reads++;
      if (socket && socket[lastWindow] !== window) {
        if (socket[lastWindow] === undefined) socket.once("close", forget);
        socket[lastWindow] = window;
        connections++;
      }
      // The window under way counts too, so a flood is seen in its first second.
      const current = connections >= floodConnections && elapsed < floodWindowMs ? (connections / reads) * elapsed : 0;
      return Math.max(estimate, current) > floodWaitMs && busyLately(now);
    },
    /** Whether many connections each sent several requests in the last window or the one under way. */
    manyBusyConnections: () => lastBusy || (connections >= busyConnections && reads >= 2 * connections),
  };
}

/** Time a turn of the event loop may spend starting requests before the rest wait for the next turn. */
const turnBudgetMs = 1;
/** Requests a turn may start whatever their time, so a few slow ones (a write waiting for SQLite's lock) are not held back. */
const turnFreeStarts = 8;

/**
 * Whether the current turn of the event loop may start one more request.
 * Node accepts one new connection per turn of its loop (measured: libuv
 * calls accept once per readiness of the listening socket), so a turn that
 * serves every socket with a request ready, hundreds under a flood, leaves
 * new connections in the kernel's accept queue for seconds: a bare
 * node:http server at 2,000 busy connections accepted about 20 a second.
 * Starting only about a millisecond of requests per turn, and queueing the
 * rest for the next, keeps turns short: the same server then accepted about
 * 600 a second, serving about 85% as many requests. A turn starts with the first
 * request it starts and ends in its check phase (`setImmediate`), where
 * `onEnd` starts the held-back requests in the next one. Admission without
 * it (a slot semaphore, a line with a deadline and the loop's utilisation
 * alone) passed the overload scenario of the chaos suite on a loaded
 * machine, then left 2,797 of its requests unanswered within 5 s on SQLite
 * on a quiet one: new connections waited in the accept queue.
 */
function loopTurn(onEnd: () => void) {
  let start = -1;
  let starts = 0;
  const end = () => {
    start = -1;
    onEnd();
  };
  return {
    /** Whether a request may start now; if so, it is counted. */
    allows(): boolean {
      const now = performance.now();
      if (start < 0) {
        start = now;
        starts = 0;
        setImmediate(end);
      }
      if (starts >= turnFreeStarts && now - start >= turnBudgetMs) return false;
      starts++;
      return true;
    },
  };
}

/** How long the window is over which the pace at which slots free is measured. */
const paceWindowMs = 100;
/** Slots freed in a window below which its pace is too uncertain to refuse on. */
const paceMinReleases = 10;
/**
 * Waiters in line from which a request may be refused on its expected wait
 * (`linePace`). A few dozen clients can hold only a few dozen places, whose
 * wait may run long for a moment (a slow commit, two processes taking turns
 * at SQLite's lock) and is still served in time: measured, refusing them on
 * the estimate answered a few requests of a 32-connection benchmark 503.
 */
const crowdedLine = 32;
/**
 * The share of `maxQueueMs` a request in a crowded line may expect to wait
 * and still join it. The pace varies (a database's latency does), so a
 * request expected just within `maxQueueMs` often waits longer and is
 * refused after all: with the whole of it, 1–3% of the overload scenario's
 * refusals still came after waiting.
 */
const expectedWaitShare = 0.5;

/**
 * How long a request joining the line can expect to wait: the k-th in line
 * waits for k slots to free, at the pace they freed lately (each full window
 * of `paceWindowMs` weighs half, the ones before it the other half, so one
 * slow commit or checkpoint does not turn the estimate). Unknown (0) while
 * slots free too rarely to tell: a slot held by one slow request says
 * nothing of when the next one frees. Without it the refusals of the chaos
 * suite's overload scenario wait in line first: on one quiet machine, its
 * 503 p99 was 61–72 ms without it against 39–55 ms with it, of a bound of
 * 100 ms that a busy machine brings much closer.
 */
function linePace() {
  let windowStart = performance.now();
  let releases = 0;
  let perMs = 0;
  const roll = (now: number) => {
    const elapsed = now - windowStart;
    if (elapsed < paceWindowMs) return;
    // A window with no request at all (an idle service) leaves no measure behind it.
    const measured = releases >= paceMinReleases && elapsed < 2 * paceWindowMs;
    const latest = releases / elapsed;
    if (!measured) perMs = 0;
    else perMs = perMs > 0 ? (perMs + latest) / 2 : latest;
    windowStart = now;
    releases = 0;
  };
  return {
    released() {
      roll(performance.now());
      releases++;
    },
    /** The expected wait of the k-th request in line, in ms; 0 when unknown. */
    expectedWaitMs(k: number): number {
      roll(performance.now());
      return perMs > 0 ? k / perMs : 0;
    },
  };
}

/**
 * Slots per process when MAX_IN_FLIGHT is unset. PostgreSQL: twice pg's
 * default pool of 10, so a connection is never idle while a request is
 * between two queries, and no request waits in the pool's own unbounded
 * queue for long. SQLite: a read is synchronous, so it holds its slot only
 * for its own turn of the loop; a write holds one while it waits for the
 * file's write lock without using the loop, and the writes waiting together
 * share one commit. With 8, two processes taking turns at the lock under 32
 * connections of creates kept requests in line past MAX_QUEUE_MS (14 of
 * about 10,000 refused; see test/admission-processes.test.ts); with 32 a
 * few dozen clients never wait in line, and the overload scenario of the
 * chaos suite fared no worse (admitted p99 66 and 400 ms against 444 and
 * 593 ms with 8, on the same loaded machine).
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
 * `maxInFlight` slots is free and the loop's turn has time left (`loopTurn`),
 * else waits in line at most `maxQueueMs` (and
 * behind at most `maxQueued` others); otherwise, or when a flood saturates
 * the event loop, or when it lags, it is refused with 503 + Retry-After.
 * In a line of `crowdedLine` or more, a request whose place would take more
 * than half of `maxQueueMs` at the pace slots free lately is refused at once
 * instead of after that wait (`linePace`): under a crowd's overload a
 * refusal is then quick, and the line holds only requests likely to be
 * served. The
 * slots are sized to what the database can do at once, so admitted requests
 * keep a bounded latency under overload and the excess is told at once to
 * come back later, instead of everyone waiting longer and longer.
 * `admit` answers nothing itself: the caller writes the refusal in the
 * format of the route that was hit.
 */
export function admission(limits: LoadLimits, provider: Provider) {
  const maxInFlight = limits.maxInFlight ?? defaultInFlight[provider];
  let inFlight = 0;
  let longPolls = 0;
  const line: Waiter[] = [];
  const lag = eventLoopLag(limits.maxEventLoopDelayMs);
  const flood = floodGuard(2 * limits.maxQueueMs);
  const turn = loopTurn(serveWaiters);
  // Without a queue to wait in, a request is never held back for a later turn.
  const turnAllows = () => limits.maxQueueMs === 0 || !flood.manyBusyConnections() || turn.allows();

  const pace = linePace();
  /** In a crowded line, a request expected to wait longer than this is refused at once. */
  const crowdedMaxWaitMs = limits.maxQueueMs * expectedWaitShare;
  const enter = (res: ServerResponse) => {
    inFlight++;
    res.once("close", release);
  };
  function release() {
    inFlight--;
    pace.released();
    serveWaiters();
  }
  /** Free slots go to the longest waiters still there, while this turn has time left. */
  function serveWaiters() {
    while (line.length > 0 && inFlight < maxInFlight && turnAllows()) {
      const waiter = line.shift() as Waiter;
      clearTimeout(waiter.timer);
      if (gone(waiter.res)) continue;
      enter(waiter.res);
      waiter.admitted(undefined);
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
      if (flood.refuses(res.socket) || lag.lagging() || gone(res)) return shed();
      if (inFlight < maxInFlight && line.length === 0 && turnAllows()) {
        enter(res);
        return undefined;
      }
      if (line.length >= limits.maxQueued || limits.maxQueueMs === 0) return shed();
      if (line.length >= crowdedLine && pace.expectedWaitMs(line.length + 1) > crowdedMaxWaitMs) return shed();
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
