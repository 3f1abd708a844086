// The service's task and lease, as its REST routes answer them
// (docs/api/tasks.md, docs/api/leases.md). Written out here because the
// worker entry carries nothing of the server; test/sdk-package.test.ts
// checks, in a project of its own, that they are the router's both ways.

/** JSON, as the service stores a task's `result` and an error's `details`. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type TaskStatus = "pending" | "running" | "succeeded" | "failed" | "cancelled";

/** A task's last failure. */
export interface TaskError {
  code: string;
  message: string;
  details: JsonValue;
}

/**
 * A task. `Input` is what the worker's handler expects in `input` (the
 * service stores any JSON object or null, and does not check it against
 * this type); `Result` what the handler returns, stored as `result`.
 */
export interface Task<Input = unknown, Result = unknown> {
  id: string;
  agent_id: string;
  title: string;
  description: string | null;
  priority: number;
  status: TaskStatus;
  input: Input;
  /** null until set; the handler's return value once the task succeeded. */
  result: Result | null;
  created_at: string;
  updated_at: string;
  max_attempts: number;
  /** Attempts that ended by failure or by an expired lease. */
  attempts: number;
  run_at: string;
  deadline_at: string | null;
  lease: { id: string; worker: string | null; expires_at: string } | null;
  /** A cancellation was asked for while the task was leased: the worker stops and acknowledges it. */
  cancel_requested: boolean;
  error: TaskError | null;
  version: number;
  metadata: Record<string, string>;
  /** The schedule that created it, and the run time it was created for (null for a run now); null otherwise. */
  schedule_id: string | null;
  scheduled_for: string | null;
}

/** A worker's hold on one task; `task` is the task as it was when the service answered. */
export interface Lease<Input = unknown, Result = unknown> {
  id: string;
  /** Whose task it is (a pool worker serves several agents). */
  agent_id: string;
  task_id: string;
  worker: string | null;
  created_at: string;
  expires_at: string;
  task: Task<Input, Result>;
}
