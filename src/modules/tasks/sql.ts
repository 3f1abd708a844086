import { statement } from "../../db/index.js";
import type { ListSource } from "../../resources/list-sql.js";
import { type RunningColumns, type TaskRow, taskColumns } from "./rows.js";

/** The values of a new task, in the order its insert takes them. */
export type NewTaskValues = [
  id: string,
  title: string,
  description: string | null,
  priority: number,
  input: string | null,
  now: Date,
  agentId: string,
  maxAttempts: number,
  runAt: Date,
  deadlineAt: Date | null,
  metadata: string,
  projectId: string,
  concurrencyKey: string | null,
  scheduleId: string | null,
  scheduledFor: Date | null,
];

/**
 * A new task's insert. A stopped agent accepts no new tasks
 * (docs/api/agents.md): the check and the insert are one statement. On
 * PostgreSQL `FOR SHARE` makes it wait for a stop in progress and then see
 * `stopped` (or makes the stop wait for the task). `onConflict` is only the
 * scheduler's: the API's insert, the hot path, has no conflict to resolve
 * and does without PostgreSQL's speculative insertion.
 */
function insertStatement(name: string, onConflict: string) {
  const sql = (lock: string) => `INSERT INTO tasks (id, project_id, agent_id, title, description, priority, status,
      input, result, created_at, updated_at, max_attempts, attempts, run_at, deadline_at, cancel_requested, version,
      metadata, concurrency_key, schedule_id, scheduled_for)
    SELECT $1, project_id, id, $2, $3, $4, 'pending', $5, NULL, $6, $6, $8, 0, $9, $10, FALSE, 1, $11, $13, $14, $15
    FROM agents WHERE id = $7 AND project_id = $12 AND status <> 'stopped'${lock}
    ${onConflict}
    RETURNING ${taskColumns}`;
  return statement<TaskRow, NewTaskValues>(name, { sqlite: sql(""), postgresql: sql(" FOR SHARE") });
}

export const taskStatements = {
  /** The metrics' count: an index-only scan of the index that leads with status (tasks: status, deadline_at). */
  countByStatus: statement<{ status: string; count: number | bigint }>(
    "tasks_count_by_status",
    "SELECT status, COUNT(*) AS count FROM tasks GROUP BY status",
  ),
  agentExists: statement<{ id: string }, [agentId: string, projectId: string]>(
    "tasks_agent_exists",
    "SELECT id FROM agents WHERE id = $1 AND project_id = $2",
  ),
  get: statement<TaskRow, [id: string, agentId: string, projectId: string]>(
    "tasks_get",
    `SELECT ${taskColumns} FROM tasks WHERE id = $1 AND agent_id = $2 AND project_id = $3`,
  ),
  /** A task (TaskCreate), for a worker or an agent's tools; its schedule columns null. */
  insert: insertStatement("tasks_insert", ""),
  /**
   * A schedule's task (docs/api/schedules.md). A second task for the same
   * schedule and run time is refused by the unique constraint on
   * (schedule_id, scheduled_for): no row.
   */
  insertScheduled: insertStatement("tasks_insert_scheduled", "ON CONFLICT (schedule_id, scheduled_for) DO NOTHING"),
  /** The status of a task, if it still exists: whether a schedule's previous task is final (overlap skip). */
  status: statement<{ status: string }, [id: string, projectId: string]>(
    "tasks_status",
    "SELECT status FROM tasks WHERE id = $1 AND project_id = $2",
  ),
  /**
   * Writes only if the row still has the version it was read with. Every
   * column a write may change is written (from the row as decided), so one
   * statement serves edits, finishing through a lease and settling.
   */
  update: statement<
    TaskRow,
    [
      title: string,
      description: string | null,
      priority: number,
      status: string,
      result: string | null,
      updatedAt: Date,
      id: string,
      agentId: string,
      version: number,
      ...running: RunningColumns,
      projectId: string,
      concurrencyKey: string | null,
    ]
  >(
    "tasks_update",
    `UPDATE tasks SET title = $1, description = $2, priority = $3, status = $4, result = $5, updated_at = $6,
       version = version + 1,
       max_attempts = $10, attempts = $11, run_at = $12, deadline_at = $13, lease_id = $14, lease_worker = $15,
       lease_created_at = $16, lease_expires_at = $17, cancel_requested = $18, error = $19,
       lease_duration_seconds = $20, metadata = $21, concurrency_key = $23
     WHERE id = $7 AND agent_id = $8 AND version = $9 AND project_id = $22 RETURNING ${taskColumns}`,
  ),
  delete: statement<TaskRow, [id: string, agentId: string, projectId: string]>(
    "tasks_delete",
    `DELETE FROM tasks WHERE id = $1 AND agent_id = $2 AND project_id = $3 RETURNING ${taskColumns}`,
  ),
  /** A conditional deletion (If-Match): only the version the request accepted. */
  deleteAtVersion: statement<TaskRow, [id: string, agentId: string, version: number, projectId: string]>(
    "tasks_delete_at_version",
    `DELETE FROM tasks WHERE id = $1 AND agent_id = $2 AND version = $3 AND project_id = $4 RETURNING ${taskColumns}`,
  ),
  /** The pairs of a metadata JSON text, one row each, for filtered lists (agent_id and created_at copied from the task). */
  insertPairs: statement<unknown, [taskId: string, createdAt: Date, metadata: string]>("task_metadata_insert", {
    sqlite: `INSERT INTO task_metadata (task_id, agent_id, key, value, created_at)
      SELECT t.id, t.agent_id, j.key, j.value, $2 FROM tasks t, json_each($3) j WHERE t.id = $1`,
    postgresql: `INSERT INTO task_metadata (task_id, agent_id, key, value, created_at)
      SELECT t.id, t.agent_id, j.key, j.value, $2 FROM tasks t, jsonb_each_text($3::jsonb) j WHERE t.id = $1`,
  }),
  deletePairs: statement<unknown, [taskId: string]>(
    "task_metadata_delete",
    "DELETE FROM task_metadata WHERE task_id = $1",
  ),
  deleteOfAgent: statement<TaskRow, [agentId: string, projectId: string]>(
    "tasks_delete_of_agent",
    `DELETE FROM tasks WHERE agent_id = $1 AND project_id = $2 RETURNING ${taskColumns}`,
  ),
};

/** GET /agents/{agent_id}/tasks (docs/http.md): the plans of every shape are in bench/README.md. */
export const taskList: ListSource = {
  name: "tasks",
  table: "tasks",
  columns: taskColumns,
  indexes: { all: "tasks_agent_id_created_at_id_idx", byStatus: "tasks_agent_id_status_created_at_id_idx" },
  byColumn: { column: "concurrency_key", index: "tasks_agent_id_concurrency_key_created_at_id_idx" },
  pairs: { table: "task_metadata", id: "task_id", index: "task_metadata_agent_id_key_value_created_at_task_id_idx" },
  scope: "agent_id",
};
