import { type Database, statement } from "../../db/index.js";
import type { Logger } from "../../logger.js";
import { taskLeasesExpired, taskRetries } from "../../metrics/registry.js";
import { type Alarm, startAlarm } from "../../resources/alarm.js";
import { lostRace, nextUpdatedAt, retryLostRaces } from "../../resources/conditional-writes.js";
import type { EventType } from "../events/types.js";
import { deadlinePassed, endAttempt, leaseExpired, type RetryPolicy } from "../tasks/outcomes.js";
import type { TaskRow } from "../tasks/rows.js";
import { tasksService } from "../tasks/service.js";

// Rows settled per query; a larger backlog takes several rounds, back to back.
const BATCH = 100;
// Notifications arrive with every change: the next due time is looked up at most this often because of them.
const REARM_AFTER_MS = 100;
// A due time that nothing could settle (another instance holds it) is looked at again after this long.
const RETRY_UNSETTLED_MS = 1_000;

type DueRow = { id: string; agent_id: string; project_id: string };

const statements = {
  /**
   * The earliest expiry of a live lease and the earliest deadline of a task
   * not final, each one index seek (tasks_lease_expires_at_idx,
   * tasks_status_deadline_at_idx) past the NULLs of every other task.
   */
  nextDue: statement<{ due: string | null }>(
    "settler_next_due",
    `SELECT MIN(due) AS due FROM (
       SELECT MIN(lease_expires_at) AS due FROM tasks WHERE lease_expires_at IS NOT NULL
       UNION ALL SELECT MIN(deadline_at) FROM tasks WHERE status = 'pending' AND deadline_at IS NOT NULL
       UNION ALL SELECT MIN(deadline_at) FROM tasks WHERE status = 'running' AND deadline_at IS NOT NULL) AS candidates`,
  ),
  expired: statement<DueRow, [now: Date, limit: number]>(
    "settler_expired",
    "SELECT id, agent_id, project_id FROM tasks WHERE lease_expires_at <= $1 ORDER BY lease_expires_at LIMIT $2",
  ),
  pastDeadline: statement<DueRow, [now: Date, limit: number]>(
    "settler_past_deadline",
    `SELECT id, agent_id, project_id FROM tasks WHERE status IN ('pending', 'running') AND deadline_at <= $1
     ORDER BY deadline_at LIMIT $2`,
  ),
};

/**
 * What is due on `row` at `now`, if anything: a passed deadline fails the
 * task (docs/api/leases.md); an expired lease ends the attempt as a failure that may
 * be retried, or cancels the task when that was asked for.
 */
function settlement(
  row: TaskRow,
  now: Date,
  policy: RetryPolicy,
): { row: TaskRow; type: EventType; retried?: boolean } | undefined {
  if (row.status !== "pending" && row.status !== "running") return undefined;
  if (row.deadline_at !== null && Date.parse(row.deadline_at) <= now.getTime()) {
    return { row: deadlinePassed(row), type: "task.updated" };
  }
  if (row.lease_expires_at !== null && Date.parse(row.lease_expires_at) <= now.getTime()) {
    const ended = endAttempt(row, leaseExpired, now, policy, { retry: true, cancelIfRequested: true });
    return { row: ended.row, type: "task.lease_expired", retried: ended.retried };
  }
  return undefined;
}

/**
 * Settles one task, once: re-read in the transaction and written only if
 * its version is still the one read, so of several settlers (other
 * instances) exactly one writes, with one event.
 */
async function settle(db: Database, task: DueRow, policy: RetryPolicy): Promise<boolean> {
  const { id, agent_id: agentId, project_id: projectId } = task;
  let settled: ReturnType<typeof settlement>;
  const written = await retryLostRaces("Task", () =>
    db.transaction(async (tx) => {
      const row = await tasksService.row(tx, projectId, id, agentId);
      if (!row) return false;
      // The write's own time is the settlement's "now", so a retry's run_at is exactly updated_at + the delay.
      const updatedAt = nextUpdatedAt(row.updated_at);
      const due = settlement(row, updatedAt, policy);
      settled = due;
      if (!due) return false;
      const written = await tasksService.writeRow(tx, row, due.row, updatedAt, due.type);
      return written === lostRace ? lostRace : true;
    }),
  );
  // Counted once committed, by the one settler that wrote.
  if (written && settled?.type === "task.lease_expired") {
    taskLeasesExpired.inc();
    if (settled.retried) taskRetries.inc();
  }
  return written;
}

export type Settler = Alarm;

/**
 * The settler (docs/api/leases.md), one per process: expired leases and passed
 * deadlines are settled within moments of their time, by whichever instance
 * gets there first. It does nothing while nothing is due: an alarm is set
 * for the earliest due time (two index seeks), and moved when a change
 * anywhere may have brought it forward (a notification on channel `events`).
 */
export function startSettler({ db, policy, logger }: { db: Database; policy: RetryPolicy; logger: Logger }): Settler {
  /** The next due time; a due time already past that nothing could settle is looked at again later. */
  async function nextDue(settledNothing = false): Promise<number | undefined> {
    const next = await db.get(statements.nextDue, []);
    const at = next?.due ? Date.parse(next.due) : undefined;
    return settledNothing && at !== undefined && at <= Date.now() ? Date.now() + RETRY_UNSETTLED_MS : at;
  }

  async function settleDue(stopped: () => boolean): Promise<number | undefined> {
    let settled = 0;
    for (;;) {
      const now = new Date();
      const due = [
        ...(await db.all(statements.expired, [now, BATCH])),
        ...(await db.all(statements.pastDeadline, [now, BATCH])),
      ];
      for (const row of due) {
        if (stopped()) return undefined;
        if (await settle(db, row, policy)) settled++;
      }
      if (due.length < BATCH) break;
    }
    return nextDue(settled === 0);
  }

  return startAlarm({
    db,
    logger,
    channel: "events",
    rearmAfterMs: REARM_AFTER_MS,
    doing: "settling leases and deadlines",
    due: settleDue,
    next: () => nextDue(),
  });
}
