import { statement } from "../../db/index.js";
import type { JsonObject, JsonValue } from "../../resources/json.js";
import type { ListSource } from "../../resources/list-sql.js";
import type { TaskOut, TaskStatus } from "./schemas.js";

/** A tasks row as the statements below return it: only these columns ever leave the database. */
export interface TaskRow {
  id: string;
  agent_id: string;
  title: string;
  description: string | null;
  priority: number;
  status: string;
  input: string | null;
  result: string | null;
  created_at: string;
  updated_at: string;
  max_attempts: number;
  attempts: number;
  run_at: string;
  deadline_at: string | null;
  lease_id: string | null;
  lease_worker: string | null;
  lease_created_at: string | null;
  lease_expires_at: string | null;
  /** The duration the lease was taken or last renewed with: a renewal's default. */
  lease_duration_seconds: number | null;
  cancel_requested: boolean;
  error: string | null;
  version: number;
  metadata: string;
}

export const taskColumns = `id, agent_id, title, description, priority, status, input, result, created_at, updated_at,
  max_attempts, attempts, run_at, deadline_at, lease_id, lease_worker, lease_created_at, lease_expires_at,
  lease_duration_seconds, cancel_requested, error, version, metadata`;

// JSON is stored as the text the client's value serialises to, so it comes
// back exactly as sent (key order included); JSON null is stored as NULL.
export const toText = (value: JsonValue | undefined) =>
  value === null || value === undefined ? null : JSON.stringify(value);
const fromText = (text: string | null) => (text === null ? null : JSON.parse(text));

/** The Task response, and the `task` of its events. */
export const toTask = (row: TaskRow): TaskOut => ({
  id: row.id,
  agent_id: row.agent_id,
  title: row.title,
  description: row.description,
  priority: row.priority,
  status: row.status as TaskStatus,
  input: fromText(row.input) as JsonObject | null,
  result: fromText(row.result) as JsonValue,
  created_at: row.created_at,
  updated_at: row.updated_at,
  max_attempts: row.max_attempts,
  attempts: row.attempts,
  run_at: row.run_at,
  deadline_at: row.deadline_at,
  lease:
    row.lease_id === null
      ? null
      : { id: row.lease_id, worker: row.lease_worker, expires_at: row.lease_expires_at as string },
  cancel_requested: row.cancel_requested,
  error: fromText(row.error),
  version: row.version,
  metadata: JSON.parse(row.metadata),
});

export const taskStatements = {
  get: statement<TaskRow, [id: string, agentId: string]>(
    "tasks_get",
    `SELECT ${taskColumns} FROM tasks WHERE id = $1 AND agent_id = $2`,
  ),
  /**
   * A stopped agent accepts no new tasks (SPEC §3): the check and the insert
   * are one statement. On PostgreSQL `FOR SHARE` makes it wait for a stop in
   * progress and then see `stopped` (or makes the stop wait for the task).
   */
  insert: statement<
    TaskRow,
    [
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
    ]
  >("tasks_insert", {
    sqlite: `INSERT INTO tasks (id, agent_id, title, description, priority, status, input, result, created_at,
        updated_at, max_attempts, attempts, run_at, deadline_at, cancel_requested, version, metadata)
      SELECT $1, id, $2, $3, $4, 'pending', $5, NULL, $6, $6, $8, 0, $9, $10, FALSE, 1, $11
      FROM agents WHERE id = $7 AND status <> 'stopped'
      RETURNING ${taskColumns}`,
    postgresql: `INSERT INTO tasks (id, agent_id, title, description, priority, status, input, result, created_at,
        updated_at, max_attempts, attempts, run_at, deadline_at, cancel_requested, version, metadata)
      SELECT $1, id, $2, $3, $4, 'pending', $5, NULL, $6, $6, $8, 0, $9, $10, FALSE, 1, $11
      FROM agents WHERE id = $7 AND status <> 'stopped' FOR SHARE
      RETURNING ${taskColumns}`,
  }),
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
    ]
  >(
    "tasks_update",
    `UPDATE tasks SET title = $1, description = $2, priority = $3, status = $4, result = $5, updated_at = $6,
       version = version + 1,
       max_attempts = $10, attempts = $11, run_at = $12, deadline_at = $13, lease_id = $14, lease_worker = $15,
       lease_created_at = $16, lease_expires_at = $17, cancel_requested = $18, error = $19,
       lease_duration_seconds = $20, metadata = $21
     WHERE id = $7 AND agent_id = $8 AND version = $9 RETURNING ${taskColumns}`,
  ),
  delete: statement<TaskRow, [id: string, agentId: string]>(
    "tasks_delete",
    `DELETE FROM tasks WHERE id = $1 AND agent_id = $2 RETURNING ${taskColumns}`,
  ),
  /** A conditional deletion (If-Match): only the version the request accepted. */
  deleteAtVersion: statement<TaskRow, [id: string, agentId: string, version: number]>(
    "tasks_delete_at_version",
    `DELETE FROM tasks WHERE id = $1 AND agent_id = $2 AND version = $3 RETURNING ${taskColumns}`,
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
  deleteOfAgent: statement<TaskRow, [agentId: string]>(
    "tasks_delete_of_agent",
    `DELETE FROM tasks WHERE agent_id = $1 RETURNING ${taskColumns}`,
  ),
};

/** The columns of SPEC §11 (running tasks) in the order `update` takes them. */
type RunningColumns = [
  maxAttempts: number,
  attempts: number,
  runAt: Date,
  deadlineAt: Date | null,
  leaseId: string | null,
  leaseWorker: string | null,
  leaseCreatedAt: Date | null,
  leaseExpiresAt: Date | null,
  cancelRequested: boolean,
  error: string | null,
  leaseDurationSeconds: number | null,
  metadata: string,
];

// Timestamps go back as Dates, so each database stores them in its own (Prisma's) form.
const dateOf = (iso: string | null) => (iso === null ? null : new Date(iso));

/** The values of `update` that write `row` (as decided) over the stored one of version `version`. */
export const updateArgs = (row: TaskRow, updatedAt: Date, version: number) =>
  [
    row.title,
    row.description,
    row.priority,
    row.status,
    row.result,
    updatedAt,
    row.id,
    row.agent_id,
    version,
    row.max_attempts,
    row.attempts,
    new Date(row.run_at),
    dateOf(row.deadline_at),
    row.lease_id,
    row.lease_worker,
    dateOf(row.lease_created_at),
    dateOf(row.lease_expires_at),
    row.cancel_requested,
    row.error,
    row.lease_duration_seconds,
    row.metadata,
  ] as const;

/** The fields of a Task whose changes an update event lists (updated_at and version change with every write). */
export const taskChangeFields = [
  "title",
  "description",
  "priority",
  "status",
  "result",
  "max_attempts",
  "attempts",
  "run_at",
  "deadline_at",
  "lease",
  "cancel_requested",
  "error",
  "metadata",
] as const;

/** SPEC's list order: created_at, then id. */
export const byCreation = (a: TaskOut, b: TaskOut) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** GET /agents/{agent_id}/tasks (SPEC §13.3): the plans of every shape are in bench/README.md. */
export const taskList: ListSource = {
  name: "tasks",
  table: "tasks",
  columns: taskColumns,
  indexes: { all: "tasks_agent_id_created_at_id_idx", byStatus: "tasks_agent_id_status_created_at_id_idx" },
  pairs: { table: "task_metadata", id: "task_id", index: "task_metadata_agent_id_key_value_created_at_task_id_idx" },
  scope: "agent_id",
};
