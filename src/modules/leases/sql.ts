import { statement } from "../../db/index.js";
import { type TaskRow, taskColumns, toTask } from "../tasks/rows.js";
import type { LeaseOut } from "./schemas.js";

/** The Lease response of a row that holds one. */
export function toLease(row: TaskRow): LeaseOut {
  if (row.lease_id === null || row.lease_created_at === null || row.lease_expires_at === null) {
    throw new Error(`Task ${row.id} holds no lease`);
  }
  return {
    id: row.lease_id,
    agent_id: row.agent_id,
    task_id: row.id,
    worker: row.lease_worker,
    created_at: row.lease_created_at,
    expires_at: row.lease_expires_at,
    task: toTask(row),
  };
}

// The pick: the agent's next ready task in docs/api/leases.md's order, walking
// tasks_agent_id_status_priority_run_at_created_at_id_idx in order (the first
// row that qualifies is the one); never one whose deadline has passed (the
// settler fails those), only for a running agent.
const nextIndex = "tasks_agent_id_status_priority_run_at_created_at_id_idx";
const ready = (alias: string) => `${alias}.agent_id = $1 AND ${alias}.status = 'pending' AND ${alias}.run_at <= $2
    AND (${alias}.deadline_at IS NULL OR ${alias}.deadline_at > $2)
    AND ${alias}.project_id = $7 AND (SELECT a.status FROM agents a WHERE a.id = $1 AND a.project_id = $7) = 'running'
    ORDER BY ${alias}.priority DESC, ${alias}.run_at, ${alias}.created_at, ${alias}.id LIMIT 1`;

// The lease, capped at the task's deadline; updated_at moves forward by at least 1 ms, as every write's does.
const leaseColumns = `status = 'running', lease_id = $3, lease_worker = $4, lease_created_at = $2,
    lease_expires_at = CASE WHEN deadline_at IS NOT NULL AND deadline_at < $5 THEN deadline_at ELSE $5 END,
    lease_duration_seconds = $6,
    version = version + 1`;

export const leaseStatements = {
  /**
   * Takes the next ready task in one statement. SQLite: one writer statement
   * (writers are serialised); INDEXED BY, since without statistics SQLite's
   * planner would rather range over run_at and sort every pending task.
   * PostgreSQL: the row is locked with SKIP LOCKED, so concurrent claims, on
   * any instance, each take a different task without waiting for one another.
   */
  claim: statement<
    TaskRow,
    [
      agentId: string,
      now: Date,
      leaseId: string,
      worker: string | null,
      expiresAt: Date,
      durationSeconds: number,
      projectId: string,
    ]
  >("leases_claim", {
    sqlite: `UPDATE tasks SET ${leaseColumns},
        updated_at = MAX($2, strftime('%Y-%m-%dT%H:%M:%f+00:00', updated_at, '+0.001 seconds'))
      WHERE id = (SELECT t.id FROM tasks t INDEXED BY ${nextIndex} WHERE ${ready("t")})
      RETURNING ${taskColumns}`,
    postgresql: `WITH next AS (
        SELECT t.id AS next_id FROM tasks t WHERE ${ready("t")} FOR UPDATE OF t SKIP LOCKED)
      UPDATE tasks SET ${leaseColumns},
        updated_at = GREATEST($2::timestamp, tasks.updated_at + interval '1 millisecond')
      FROM next WHERE tasks.id = next.next_id
      RETURNING ${taskColumns}`,
  }),
  /** The task holding lease `leaseId` (tasks_lease_id_key), under its agent. */
  byLease: statement<TaskRow, [leaseId: string, agentId: string, projectId: string]>(
    "leases_by_id",
    `SELECT ${taskColumns} FROM tasks WHERE lease_id = $1 AND agent_id = $2 AND project_id = $3`,
  ),
  /**
   * When the agent's next task is or becomes ready: the earliest run_at of
   * its pending tasks whose deadline is still ahead (tasks_agent_id_status_run_at_idx).
   */
  nextRunAt: statement<{ run_at: string }, [agentId: string, now: Date, projectId: string]>(
    "leases_next_run_at",
    `SELECT run_at FROM tasks WHERE agent_id = $1 AND status = 'pending' AND (deadline_at IS NULL OR deadline_at > $2)
       AND project_id = $3
     ORDER BY run_at LIMIT 1`,
  ),
  agentStatus: statement<{ status: string }, [agentId: string, projectId: string]>(
    "leases_agent_status",
    "SELECT status FROM agents WHERE id = $1 AND project_id = $2",
  ),
};
