import { type Database, statement } from "../../db/index.js";
import type { Logger } from "../../logger.js";
import { taskLeasesExpired, taskRetries } from "../../metrics/registry.js";
import { lostRace, nextUpdatedAt, retryLostRaces } from "../../resources/conditional-writes.js";
import type { EventType } from "../events/types.js";
import { deadlinePassed, endAttempt, leaseExpired, type RetryPolicy } from "../tasks/outcomes.js";
import type { TaskRow } from "../tasks/rows.js";
import { tasksService } from "../tasks/service.js";

// Rows settled per query; a larger backlog takes several rounds, back to back.
const BATCH = 100;
// Notifications arrive with every change: the next due time is looked up at most this often because of them.
const REARM_AFTER_MS = 100;
// Even with nothing due, look again this often (a safety net, not a poll: once an hour).
const LONGEST_SLEEP_MS = 3_600_000;
// After a failure (the database unreachable), look again after this long, doubling up to the longest.
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;

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

export interface Settler {
  /** Settles whatever is due now and sets the alarm for the next due time (what the alarm calls). */
  run(): Promise<void>;
  /** When the alarm is set for (ms since the epoch), or undefined when nothing is due. */
  readonly alarm: number | undefined;
  stop(): Promise<void>;
}

/**
 * The settler (docs/api/leases.md), one per process: expired leases and passed
 * deadlines are settled within moments of their time, by whichever instance
 * gets there first. It does nothing while nothing is due: an alarm is set
 * for the earliest due time (two index seeks), and moved when a change
 * anywhere may have brought it forward (a notification on channel `events`).
 */
export function startSettler({ db, policy, logger }: { db: Database; policy: RetryPolicy; logger: Logger }): Settler {
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
    timer = setTimeout(() => void settler.run(), delay);
    timer.unref();
  };

  /** Sets the alarm for the next due time; a due time already past that nothing could settle is looked at again later. */
  async function rearmAlarm(settledNothing = false): Promise<void> {
    const next = await db.get(statements.nextDue, []);
    const at = next?.due ? Date.parse(next.due) : undefined;
    setAlarm(settledNothing && at !== undefined && at <= Date.now() ? Date.now() + FIRST_RETRY_MS : at);
  }

  async function settleDue(): Promise<void> {
    let settled = 0;
    for (;;) {
      const now = new Date();
      const due = [
        ...(await db.all(statements.expired, [now, BATCH])),
        ...(await db.all(statements.pastDeadline, [now, BATCH])),
      ];
      for (const row of due) {
        if (stopped) return;
        if (await settle(db, row, policy)) settled++;
      }
      if (due.length < BATCH) break;
    }
    await rearmAlarm(settled === 0);
  }

  /** One task at a time: the alarm settles, a notification only moves the alarm. */
  function exclusive(work: () => Promise<void>): Promise<void> {
    if (stopped) return Promise.resolve();
    const previous = running ?? Promise.resolve();
    const next = previous.then(async () => {
      if (stopped) return;
      try {
        await work();
        retryDelay = FIRST_RETRY_MS;
      } catch (error) {
        logger.warn({ err: error }, "settling leases and deadlines failed; trying again shortly");
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

  const settler: Settler = {
    get alarm() {
      return alarm;
    },
    run: () => exclusive(settleDue),
    async stop() {
      stopped = true;
      stopListening();
      clearTimeout(timer);
      clearTimeout(rearm);
      await running;
    },
  };

  const stopListening = db.listen("events", () => {
    if (rearm || stopped) return;
    rearm = setTimeout(() => {
      rearm = undefined;
      void exclusive(() => rearmAlarm());
    }, REARM_AFTER_MS);
    rearm.unref();
  });
  void settler.run();
  return settler;
}
