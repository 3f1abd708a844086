import type { Database } from "../db/index.js";
import type { Logger } from "../logger.js";

// Even with nothing due, look again this often (a safety net, not a poll).
const LONGEST_SLEEP_MS = 3_600_000;
// After a failure (the database unreachable), look again after this long, doubling up to the longest.
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;

/** Background work that sleeps until its next due time: the lease settler, the scheduler. */
export interface Alarm {
  /** Does whatever is due now and sets the alarm for the next due time (what the alarm calls). */
  run(): Promise<void>;
  /** When the alarm is set for (ms since the epoch), or undefined when nothing is due. */
  readonly alarm: number | undefined;
  stop(): Promise<void>;
}

export interface AlarmWork {
  db: Database;
  logger: Logger;
  /** The notification channel on which a change anywhere may bring the next due time forward. */
  channel: string;
  /** A notification moves the alarm at most this often. */
  rearmAfterMs: number;
  /** What a failed run was doing, for its warning ("settling leases and deadlines"). */
  doing: string;
  /** Does what is due, checking `stopped()` between items, and answers when to look next. */
  due(stopped: () => boolean): Promise<number | undefined>;
  /** The next due time, when a notification says it may have moved. */
  next(): Promise<number | undefined>;
}

/**
 * Runs `work.due` when the alarm rings, one run at a time, and sets the alarm
 * for the time it answers. A notification on the channel only moves the
 * alarm (`work.next`), at most once per `rearmAfterMs`. A failed run is
 * tried again after 1 s, doubling up to 30 s. Doing nothing while nothing is
 * due is the point: no row is polled.
 */
export function startAlarm(work: AlarmWork): Alarm {
  let timer: NodeJS.Timeout | undefined;
  let alarm: number | undefined;
  let rearm: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let retryDelay = FIRST_RETRY_MS;
  const isStopped = () => stopped;

  const setAlarm = (at: number | undefined) => {
    clearTimeout(timer);
    alarm = at;
    if (stopped) return;
    const delay = at === undefined ? LONGEST_SLEEP_MS : Math.min(Math.max(at - Date.now(), 0), LONGEST_SLEEP_MS);
    timer = setTimeout(() => void started.run(), delay);
    timer.unref();
  };

  /** One task at a time: the alarm runs the work, a notification only moves the alarm. */
  function exclusive(task: () => Promise<number | undefined>): Promise<void> {
    if (stopped) return Promise.resolve();
    const previous = running ?? Promise.resolve();
    const next = previous.then(async () => {
      if (stopped) return;
      try {
        const at = await task();
        retryDelay = FIRST_RETRY_MS;
        setAlarm(at);
      } catch (error) {
        work.logger.warn({ err: error }, `${work.doing} failed; trying again shortly`);
        setAlarm(Date.now() + retryDelay);
        retryDelay = Math.min(retryDelay * 2, LAST_RETRY_MS);
      }
    });
    running = next;
    void next.then(() => {
      if (running === next) running = undefined;
    });
    return next;
  }

  const started: Alarm = {
    get alarm() {
      return alarm;
    },
    run: () => exclusive(() => work.due(isStopped)),
    async stop() {
      stopped = true;
      stopListening();
      clearTimeout(timer);
      clearTimeout(rearm);
      await running;
    },
  };

  const stopListening = work.db.listen(work.channel, () => {
    if (rearm || stopped) return;
    rearm = setTimeout(() => {
      rearm = undefined;
      void exclusive(work.next);
    }, work.rearmAfterMs);
    rearm.unref();
  });
  void started.run();
  return started;
}
