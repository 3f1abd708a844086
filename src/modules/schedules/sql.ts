import { statement } from "../../db/index.js";
import type { ScheduledTaskTemplate } from "../tasks/service.js";
import type { ScheduleOut } from "./schemas.js";

/** A schedules row as the statements below return it. */
export interface ScheduleRow {
  id: string;
  project_id: string;
  agent_id: string;
  cron: string | null;
  every_seconds: number | null;
  timezone: string;
  task: string;
  overlap: string;
  catch_up: string;
  paused: boolean;
  start_at: string | null;
  end_at: string | null;
  next_run_at: string | null;
  last_run_at: string | null;
  last_task_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const columns = `id, project_id, agent_id, cron, every_seconds, timezone, task, overlap, catch_up, paused, start_at,
  end_at, next_run_at, last_run_at, last_task_id, created_at, updated_at, version`;

/**
 * The schedule's task template as stored (a JSON column): a template stored
 * before concurrency_key was one has none.
 */
export function templateOf(
  row: Pick<ScheduleRow, "task">,
): ScheduledTaskTemplate & { deadline_seconds: number | null } {
  const template = JSON.parse(row.task);
  return { ...template, concurrency_key: template.concurrency_key ?? null };
}

export const toSchedule = (row: ScheduleRow): ScheduleOut => ({
  id: row.id,
  agent_id: row.agent_id,
  cron: row.cron,
  every_seconds: row.every_seconds,
  timezone: row.timezone,
  task: templateOf(row),
  overlap: row.overlap as ScheduleOut["overlap"],
  catch_up: row.catch_up as ScheduleOut["catch_up"],
  paused: row.paused,
  start_at: row.start_at,
  end_at: row.end_at,
  next_run_at: row.next_run_at,
  last_run_at: row.last_run_at,
  last_task_id: row.last_task_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
  version: row.version,
});

/** Wakes every instance's scheduler (./scheduler.ts): a schedule's next run time may have moved earlier. */
export const schedulesChannel = "schedules";

/** The values every write of a schedule's definition sets, in this order ($2 … $14). */
export type ScheduleValues = [
  cron: string | null,
  everySeconds: number | null,
  timezone: string,
  task: string,
  overlap: string,
  catchUp: string,
  paused: boolean,
  startAt: Date | null,
  endAt: Date | null,
  nextRunAt: Date | null,
  updatedAt: Date,
];

export const scheduleStatements = {
  agentExists: statement<{ id: string }, [agentId: string, projectId: string]>(
    "schedules_agent_exists",
    "SELECT id FROM agents WHERE id = $1 AND project_id = $2",
  ),
  get: statement<ScheduleRow, [id: string, agentId: string, projectId: string]>(
    "schedules_get",
    `SELECT ${columns} FROM schedules WHERE id = $1 AND agent_id = $2 AND project_id = $3`,
  ),
  /**
   * The row, locked on PostgreSQL until the transaction ends (a scheduler's
   * claim waits for a PATCH, and the other way round). Its agent is locked
   * first, as the agent's deletion does, which then deletes the schedules:
   * taken the other way round, a run now holding the schedule and waiting
   * for the agent (its task's key) deadlocked with that deletion. The
   * subquery runs before the scan, so the agent's lock always comes first;
   * an agent deleted meanwhile leaves no row, and the answer is 404.
   */
  lock: statement<ScheduleRow, [id: string, agentId: string, projectId: string]>("schedules_lock", {
    sqlite: `SELECT ${columns} FROM schedules WHERE id = $1 AND agent_id = $2 AND project_id = $3`,
    postgresql: `SELECT ${columns} FROM schedules WHERE id = $1 AND project_id = $3
      AND agent_id = (SELECT id FROM agents WHERE id = $2 AND project_id = $3 FOR KEY SHARE) FOR UPDATE`,
  }),
  /** An agent's schedules in (created_at, id) order (schedules_agent_id_created_at_id_idx). */
  page: statement<ScheduleRow, [agentId: string, projectId: string, limit: number]>(
    "schedules_page",
    `SELECT ${columns} FROM schedules WHERE agent_id = $1 AND project_id = $2 ORDER BY created_at, id LIMIT $3`,
  ),
  pageAfter: statement<ScheduleRow, [agentId: string, projectId: string, limit: number, createdAt: Date, id: string]>(
    "schedules_page_after",
    `SELECT ${columns} FROM schedules WHERE agent_id = $1 AND project_id = $2
       AND created_at >= $4 AND (created_at > $4 OR id > $5)
     ORDER BY created_at, id LIMIT $3`,
  ),
  insert: statement<ScheduleRow, [id: string, ...values: ScheduleValues, agentId: string, projectId: string]>(
    "schedules_insert",
    `INSERT INTO schedules (id, cron, every_seconds, timezone, task, overlap, catch_up, paused, start_at, end_at,
       next_run_at, updated_at, created_at, agent_id, project_id, version)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, id, project_id, 1
     FROM agents WHERE id = $13 AND project_id = $14
     RETURNING ${columns}`,
  ),
  update: statement<
    ScheduleRow,
    [id: string, ...values: ScheduleValues, agentId: string, projectId: string, version: number]
  >(
    "schedules_update",
    `UPDATE schedules SET cron = $2, every_seconds = $3, timezone = $4, task = $5, overlap = $6, catch_up = $7,
       paused = $8, start_at = $9, end_at = $10, next_run_at = $11, updated_at = $12, version = version + 1
     WHERE id = $1 AND agent_id = $13 AND project_id = $14 AND version = $15
     RETURNING ${columns}`,
  ),
  delete: statement<ScheduleRow, [id: string, agentId: string, projectId: string]>(
    "schedules_delete",
    `DELETE FROM schedules WHERE id = $1 AND agent_id = $2 AND project_id = $3 RETURNING ${columns}`,
  ),
  deleteOfAgent: statement<ScheduleRow, [agentId: string, projectId: string]>(
    "schedules_delete_of_agent",
    `DELETE FROM schedules WHERE agent_id = $1 AND project_id = $2 RETURNING ${columns}`,
  ),
  /** A run now: the schedule's previous task, for overlap skip; next_run_at stays. */
  recordRunNow: statement<unknown, [id: string, taskId: string]>(
    "schedules_record_run_now",
    "UPDATE schedules SET last_task_id = $2 WHERE id = $1",
  ),

  // The scheduler (./scheduler.ts).

  /** The earliest run time of every schedule: one seek of schedules_next_run_at_idx past the NULLs. */
  nextDue: statement<{ due: string | null }>(
    "schedules_next_due",
    "SELECT MIN(next_run_at) AS due FROM schedules WHERE next_run_at IS NOT NULL",
  ),
  /**
   * Due schedules, claimed: on PostgreSQL locked with SKIP LOCKED, so each
   * instance takes others than those in flight elsewhere, with their agents
   * shared-locked in the same step (an agent being deleted or changed is
   * passed over until it is done, rather than waited for while holding its
   * schedules, which would deadlock with the deletion); on SQLite the
   * transaction holds the write lock, so claims are one at a time.
   */
  claimDue: statement<ScheduleRow & { agent_status: string }, [now: Date, limit: number]>("schedules_claim_due", {
    sqlite: `SELECT ${columns.replace(/(\w+)/g, "s.$1")}, a.status AS agent_status
      FROM schedules s INDEXED BY schedules_next_run_at_idx JOIN agents a ON a.id = s.agent_id
      WHERE s.next_run_at <= $1 ORDER BY s.next_run_at LIMIT $2`,
    postgresql: `SELECT ${columns.replace(/(\w+)/g, "s.$1")}, a.status AS agent_status
      FROM schedules s JOIN agents a ON a.id = s.agent_id
      WHERE s.next_run_at <= $1 ORDER BY s.next_run_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED FOR SHARE OF a SKIP LOCKED`,
  }),
  /** After a run time: the next one, and the task made (or the previous one kept when none was made). */
  advance: statement<unknown, [id: string, nextRunAt: Date | null, lastRunAt: Date | null, lastTaskId: string | null]>(
    "schedules_advance",
    `UPDATE schedules SET next_run_at = $2, last_run_at = COALESCE($3, last_run_at),
       last_task_id = COALESCE($4, last_task_id)
     WHERE id = $1`,
  ),
};
