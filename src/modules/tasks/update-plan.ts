import { AppError, validationError } from "../../errors.js";
import { given } from "../../resources/conditional-writes.js";
import { instantOf } from "../../resources/schemas.js";
import { isStatusChange } from "../../resources/transitions.js";
import type { EventType } from "../events/types.js";
import {
  endAttempt,
  failureText,
  hasLiveLease,
  type RetryPolicy,
  type TaskFailure,
  unexplainedFailure,
  withoutLease,
} from "./outcomes.js";
import { type TaskRow, toText } from "./rows.js";
import type { TaskStatus, TaskUpdateBody } from "./schemas.js";

/*
 * What a PATCH of a task does (docs/api/tasks.md, docs/api/leases.md), decided on the
 * row as stored: the row to write and the event that records it. Tasks
 * without a lease move through the task table of docs/api/tasks.md; a leased task's
 * status is its worker's, who changes it with its lease_id, while anyone may
 * ask for its cancellation (202) or change its other fields.
 */

/** docs/api/tasks.md: pending → running → succeeded | failed; pending | running → cancelled; the rest are final. */
export const taskTransitions: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ["running", "cancelled"],
  running: ["succeeded", "failed", "cancelled"],
  succeeded: [],
  failed: [],
  cancelled: [],
};

export interface PlannedUpdate {
  row: TaskRow;
  type: EventType;
}

const final = new Set<string>(["succeeded", "failed", "cancelled"]);

const leaseRequired = () =>
  new AppError("conflict", "The task is leased: only its worker changes its status, with its lease_id", {
    lease: "required",
  });

const leaseLost = () =>
  new AppError(
    "conflict",
    "This lease is no longer the task's: it expired, was released, or the task ended or was leased again",
    { lease: "lost" },
  );

const onlyWhile = (field: string, when: string, status: string) =>
  new AppError("conflict", `${field} can only be changed while the task is ${when}; it is ${status}`, {
    field,
    status,
  });

/** max_attempts, run_at and deadline_at: when a task may run, how often, until when. */
function schedule(row: TaskRow, patch: TaskUpdateBody): TaskRow {
  const after = { ...row };
  const changes = (field: "max_attempts" | "run_at" | "deadline_at") => patch[field] !== undefined;
  if (changes("max_attempts") && patch.max_attempts !== row.max_attempts) {
    if (final.has(row.status)) throw onlyWhile("max_attempts", "not final", row.status);
    after.max_attempts = patch.max_attempts as number;
  }
  if (changes("run_at")) {
    const runAt = instantOf(patch.run_at as string).toISOString();
    if (runAt !== row.run_at) {
      if (row.status !== "pending") throw onlyWhile("run_at", "pending", row.status);
      after.run_at = runAt;
    }
  }
  if (changes("deadline_at")) {
    const deadline = patch.deadline_at === null ? null : instantOf(patch.deadline_at as string).toISOString();
    if (deadline !== row.deadline_at) {
      if (final.has(row.status)) throw onlyWhile("deadline_at", "not final", row.status);
      after.deadline_at = deadline;
      // A lease never outlives its task's deadline (docs/api/leases.md).
      if (deadline !== null && after.lease_expires_at !== null && deadline < after.lease_expires_at) {
        after.lease_expires_at = deadline;
      }
    }
  }
  if ((changes("run_at") || changes("deadline_at")) && after.deadline_at !== null) {
    if (after.deadline_at < after.run_at) {
      throw validationError([
        changes("deadline_at")
          ? { field: "deadline_at", message: "must not be earlier than run_at" }
          : { field: "run_at", message: "must not be later than deadline_at" },
      ]);
    }
  }
  return after;
}

/** The failure a PATCH reports, if it reports one. */
const reportedFailure = (patch: TaskUpdateBody): TaskFailure | undefined =>
  patch.error && { ...patch.error, details: patch.error.details ?? null };

/** The worker, holding the live lease, finishes the task (or changes nothing about its status). */
function finish(row: TaskRow, status: TaskStatus, patch: TaskUpdateBody, now: Date, policy: RetryPolicy) {
  isStatusChange(taskTransitions, row.status as TaskStatus, status);
  if (status === "failed") {
    const failure = reportedFailure(patch) ?? unexplainedFailure;
    const ended = endAttempt(row, failure, now, policy, { retry: patch.retry !== false, cancelIfRequested: false });
    return { row: ended.row, type: ended.retried ? "task.retry_scheduled" : "task.updated" } as const;
  }
  return { row: { ...withoutLease(row), status }, type: "task.updated" } as const;
}

export function planTaskUpdate(row: TaskRow, patch: TaskUpdateBody, now: Date, policy: RetryPolicy): PlannedUpdate {
  const { title, description, priority, result, status } = patch;
  const leased = row.lease_id !== null;
  if (patch.lease_id !== undefined && !(hasLiveLease(row, now) && patch.lease_id === row.lease_id)) throw leaseLost();
  const edited = { ...row, ...given({ title, description, priority }) };
  if (result !== undefined) edited.result = toText(result);
  const after = schedule(edited, patch);
  // A running task counts under its key: changing it then could take a key past its limit.
  if (patch.concurrency_key !== undefined && patch.concurrency_key !== row.concurrency_key) {
    if (row.status !== "pending") throw onlyWhile("concurrency_key", "pending", row.status);
    after.concurrency_key = patch.concurrency_key;
  }
  if (status === undefined || status === row.status) return { row: after, type: "task.updated" };
  if (!leased) {
    isStatusChange(taskTransitions, row.status as TaskStatus, status);
    const failure = status === "failed" ? reportedFailure(patch) : undefined;
    return { row: { ...after, status, error: failure ? failureText(failure) : after.error }, type: "task.updated" };
  }
  if (patch.lease_id !== undefined) return finish(after, status, patch, now, policy);
  if (status !== "cancelled") throw leaseRequired();
  // Asking again changes nothing: a no-op, answered 202 all the same.
  if (row.cancel_requested) return { row: after, type: "task.updated" };
  return { row: { ...after, cancel_requested: true }, type: "task.cancel_requested" };
}

/** A new task's max_attempts, run_at (default: now) and deadline_at, which must not be earlier than run_at. */
export function newTaskSchedule(input: Pick<TaskUpdateBody, "max_attempts" | "run_at" | "deadline_at">, now: Date) {
  const runAt = input.run_at === undefined ? now : instantOf(input.run_at);
  const deadlineAt = input.deadline_at == null ? null : instantOf(input.deadline_at);
  if (deadlineAt !== null && deadlineAt.getTime() < runAt.getTime()) {
    const message = `must not be earlier than run_at${input.run_at === undefined ? " (now, by default)" : ""}`;
    throw validationError([{ field: "deadline_at", message }]);
  }
  return { maxAttempts: input.max_attempts ?? 1, runAt, deadlineAt };
}
