import type { Database, Tx } from "../../db/index.js";
import type { Logger } from "../../logger.js";
import { scheduleRunLag, scheduleRuns } from "../../metrics/registry.js";
import { type Alarm, startAlarm } from "../../resources/alarm.js";
import { instantOf } from "../../resources/schemas.js";
import { tasksService } from "../tasks/service.js";
import { deadlineOf, dueRuns, MISSED_AFTER_MS } from "./runs.js";
import { type ScheduleRow, scheduleStatements, schedulesChannel, templateOf } from "./sql.js";

// Schedules taken per transaction; a larger backlog takes several, back to back.
const BATCH = 50;
// A notification moves the alarm at most this often.
const REARM_AFTER_MS = 50;
// Due schedules held by another instance's transaction: look again after this long.
const HELD_ELSEWHERE_MS = 250;

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

export type Scheduler = Alarm;

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
  /**
   * The earliest run time. One that was already due when this instance
   * claimed (`claimedAt`) and yet not taken is held by another instance's
   * transaction: looked at again shortly.
   */
  async function nextRun(claimedAt?: number): Promise<number | undefined> {
    const next = await db.get(scheduleStatements.nextDue, []);
    const at = next?.due ? instantOf(next.due).getTime() : undefined;
    return claimedAt !== undefined && at !== undefined && at <= claimedAt ? Date.now() + HELD_ELSEWHERE_MS : at;
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

  async function runDue(stopped: () => boolean): Promise<number | undefined> {
    let taken = 0;
    let claimedAt: number | undefined;
    for (;;) {
      if (stopped()) return undefined;
      const batch = await runBatch();
      taken += batch.taken;
      claimedAt = batch.claimedAt;
      if (batch.taken < BATCH) break;
    }
    return nextRun(taken === 0 ? claimedAt : undefined);
  }

  return startAlarm({
    db,
    logger,
    channel: schedulesChannel,
    rearmAfterMs: REARM_AFTER_MS,
    doing: "running schedules",
    due: runDue,
    next: () => nextRun(),
  });
}
