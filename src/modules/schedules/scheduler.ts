import type { Database, Tx } from "../../db/index.js";
import type { Logger } from "../../logger.js";
import { scheduleRunLag, scheduleRuns } from "../../metrics/registry.js";
import { instantOf } from "../../resources/schemas.js";
import { tasksService } from "../tasks/service.js";
import { deadlineOf, dueRuns, MISSED_AFTER_MS, templateOf } from "./runs.js";
import { type ScheduleRow, scheduleStatements, schedulesChannel } from "./sql.js";

// Schedules taken per transaction; a larger backlog takes several, back to back.
const BATCH = 50;
// A notification moves the alarm at most this often.
const REARM_AFTER_MS = 50;
// Due schedules held by another instance's transaction: look again after this long.
const HELD_ELSEWHERE_MS = 250;
// Even with nothing due, look again this often (a safety net, not a poll).
const LONGEST_SLEEP_MS = 3_600_000;
// After a failure (the database unreachable), look again after this long, doubling up to the longest.
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;

interface Tally {
  created: number;
  skipped_overlap: number;
  skipped_missed: number;
  lags: number[];
}

/**
 * One due schedule, in the claiming transaction: the run time it is due for
 * (the latest passed; earlier ones are missed), its task unless a policy or
 * a stopped agent says otherwise, and its next run time, all committed
 * together. A task is made only for a run time not already made (the unique
 * constraint on schedule_id and scheduled_for).
 */
async function runOne(tx: Tx, row: ScheduleRow & { agent_status: string }, now: Date, tally: Tally) {
  const { latest, passed, next } = dueRuns(row, now.getTime());
  tally.skipped_missed += passed;
  let made: { taskId: string; runAt: Date } | undefined;
  if (row.catch_up === "none" && now.getTime() - latest > MISSED_AFTER_MS) {
    tally.skipped_missed++;
  } else if (row.agent_status === "stopped") {
    // A stopped agent's schedules create nothing; its next run time moves on all the same.
  } else if (
    row.overlap === "skip" &&
    row.last_task_id !== null &&
    !(await tasksService.isFinalOrGone(tx, row.project_id, row.last_task_id))
  ) {
    tally.skipped_overlap++;
  } else {
    const template = templateOf(row);
    const runAt = new Date(latest);
    const task = await tasksService.createScheduled(
      tx,
      row.project_id,
      row.agent_id,
      { scheduleId: row.id, scheduledFor: runAt, runAt, deadlineAt: deadlineOf(template, latest) },
      template,
      now,
    );
    if (task) {
      tally.created++;
      tally.lags.push(Date.parse(task.created_at) - latest);
      made = { taskId: task.id, runAt };
    }
  }
  await tx.run(scheduleStatements.advance, [
    row.id,
    next === null ? null : new Date(next),
    made?.runAt ?? null,
    made?.taskId ?? null,
  ]);
}

export interface Scheduler {
  /** Runs whatever is due now and sets the alarm for the next run time (what the alarm calls). */
  run(): Promise<void>;
  /** When the alarm is set for (ms since the epoch), or undefined when nothing is due. */
  readonly alarm: number | undefined;
  stop(): Promise<void>;
}

/**
 * The scheduler (docs/api/schedules.md), one per process, safe on every
 * instance at once. It sleeps until the earliest next_run_at of all
 * schedules (one index seek), and moves that alarm when a schedule changes
 * anywhere (a notification on channel `schedules`). Due schedules are
 * claimed in a transaction: on PostgreSQL locked with SKIP LOCKED, so
 * instances share the work without waiting on each other; on SQLite under
 * the write lock. Each run's task and the schedule's next run time commit
 * together, so a crash at any point leaves either both or neither.
 */
export function startScheduler({ db, logger }: { db: Database; logger: Logger }): Scheduler {
  let timer: NodeJS.Timeout | undefined;
  let alarm: number | undefined;
  let rearm: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let retryDelay = FIRST_RETRY_MS;

  const setAlarm = (at: number | undefined) => {
    clearTimeout(timer);
    alarm = at;
    if (stopped) return;
    const delay = at === undefined ? LONGEST_SLEEP_MS : Math.min(Math.max(at - Date.now(), 0), LONGEST_SLEEP_MS);
    timer = setTimeout(() => void scheduler.run(), delay);
    timer.unref();
  };

  /**
   * The alarm at the earliest run time. One that was already due when this
   * instance claimed (`claimedAt`) and yet not taken is held by another
   * instance's transaction: looked at again shortly.
   */
  async function rearmAlarm(claimedAt?: number): Promise<void> {
    const next = await db.get(scheduleStatements.nextDue, []);
    const at = next?.due ? instantOf(next.due).getTime() : undefined;
    setAlarm(claimedAt !== undefined && at !== undefined && at <= claimedAt ? Date.now() + HELD_ELSEWHERE_MS : at);
  }

  async function runBatch(): Promise<{ taken: number; claimedAt: number }> {
    const tally: Tally = { created: 0, skipped_overlap: 0, skipped_missed: 0, lags: [] };
    let claimedAt = Date.now();
    const taken = await db.transaction(async (tx) => {
      const now = new Date();
      claimedAt = now.getTime();
      const rows = await tx.all(scheduleStatements.claimDue, [now, BATCH]);
      for (const row of rows) await runOne(tx, row, now, tally);
      return rows.length;
    });
    // Counted once committed.
    if (tally.created) scheduleRuns.inc({ outcome: "created" }, tally.created);
    if (tally.skipped_overlap) scheduleRuns.inc({ outcome: "skipped_overlap" }, tally.skipped_overlap);
    if (tally.skipped_missed) scheduleRuns.inc({ outcome: "skipped_missed" }, tally.skipped_missed);
    for (const lag of tally.lags) scheduleRunLag.observe(Math.max(lag, 0) / 1000);
    return { taken, claimedAt };
  }

  async function runDue(): Promise<void> {
    let taken = 0;
    let claimedAt: number;
    for (;;) {
      if (stopped) return;
      const batch = await runBatch();
      taken += batch.taken;
      claimedAt = batch.claimedAt;
      if (batch.taken < BATCH) break;
    }
    await rearmAlarm(taken === 0 ? claimedAt : undefined);
  }

  /** One task at a time: the alarm runs, a notification only moves the alarm. */
  function exclusive(work: () => Promise<void>): Promise<void> {
    if (stopped) return Promise.resolve();
    const previous = running ?? Promise.resolve();
    const next = previous.then(async () => {
      if (stopped) return;
      try {
        await work();
        retryDelay = FIRST_RETRY_MS;
      } catch (error) {
        logger.warn({ err: error }, "running schedules failed; trying again shortly");
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

  const scheduler: Scheduler = {
    get alarm() {
      return alarm;
    },
    run: () => exclusive(runDue),
    async stop() {
      stopped = true;
      stopListening();
      clearTimeout(timer);
      clearTimeout(rearm);
      await running;
    },
  };

  const stopListening = db.listen(schedulesChannel, () => {
    if (rearm || stopped) return;
    rearm = setTimeout(() => {
      rearm = undefined;
      void exclusive(() => rearmAlarm());
    }, REARM_AFTER_MS);
    rearm.unref();
  });
  void scheduler.run();
  return scheduler;
}
