import type { JsonObject, JsonValue } from "../../resources/json.js";
import type { TaskOut, TaskStatus } from "./schemas.js";

/** A tasks row as the statements return it (sql.ts, and the leases' over the same table): only these columns ever leave the database. */
export interface TaskRow {
  id: string;
  project_id: string;
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
  schedule_id: string | null;
  scheduled_for: string | null;
}

export const taskColumns = `id, project_id, agent_id, title, description, priority, status, input, result, created_at, updated_at,
  max_attempts, attempts, run_at, deadline_at, lease_id, lease_worker, lease_created_at, lease_expires_at,
  lease_duration_seconds, cancel_requested, error, version, metadata, schedule_id, scheduled_for`;

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
  schedule_id: row.schedule_id,
  scheduled_for: row.scheduled_for,
});

/** The columns of docs/api/leases.md (running tasks) in the order `update` takes them. */
export type RunningColumns = [
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
    row.project_id,
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

/** The lists' order: created_at, then id. */
export const byCreation = (a: TaskOut, b: TaskOut) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
