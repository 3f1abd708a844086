import type { JsonValue } from "../../resources/json.js";
import type { TaskRow } from "./rows.js";

/*
 * How an attempt ends (docs/api/leases.md), as pure steps from one tasks row to
 * the next: a worker's report, an expired lease, a release, a passed deadline.
 * Callers write the result conditionally on the version they read, so each
 * ending is applied once, whoever (worker, settler, another instance) gets
 * there first.
 */

/** TASK_RETRY_BASE_SECONDS / TASK_RETRY_MAX_SECONDS. */
export interface RetryPolicy {
  baseSeconds: number;
  maxSeconds: number;
}

/** The defaults of those settings (src/config.ts). */
export const defaultRetryPolicy: RetryPolicy = { baseSeconds: 10, maxSeconds: 3600 };

export interface TaskFailure {
  code: string;
  message: string;
  details: JsonValue;
}

/** Delay before the retry that follows failed attempt number `attempts` (1, 2, …). */
export const retryDelayMs = (policy: RetryPolicy, attempts: number) =>
  Math.round(Math.min(policy.baseSeconds * 2 ** (attempts - 1), policy.maxSeconds) * 1000);

export const failureText = (failure: TaskFailure) =>
  JSON.stringify({ code: failure.code, message: failure.message, details: failure.details });

export const leaseExpired: TaskFailure = {
  code: "lease_expired",
  message: "The worker's lease expired before the task finished",
  details: null,
};

export const deadlineExceeded: TaskFailure = {
  code: "deadline_exceeded",
  message: "The task was not finished by its deadline",
  details: null,
};

/** What a worker reporting `status: failed` without an error is taken to mean. */
export const unexplainedFailure: TaskFailure = {
  code: "failed",
  message: "The worker reported a failure",
  details: null,
};

const iso = (time: Date) => time.toISOString();

/** The row without its lease: the lease columns are NULL together. */
export const withoutLease = (row: TaskRow): TaskRow => ({
  ...row,
  lease_id: null,
  lease_worker: null,
  lease_created_at: null,
  lease_expires_at: null,
  lease_duration_seconds: null,
});

/** Whether `row` holds a lease that has not expired at `now`. */
export const hasLiveLease = (row: TaskRow, now: Date) =>
  row.lease_id !== null && row.lease_expires_at !== null && Date.parse(row.lease_expires_at) > now.getTime();

/** A lease's end: never after the task's deadline (docs/api/leases.md). */
export function leaseEnd(row: Pick<TaskRow, "deadline_at">, now: Date, durationSeconds: number): Date {
  const end = now.getTime() + durationSeconds * 1000;
  return new Date(row.deadline_at === null ? end : Math.min(end, Date.parse(row.deadline_at)));
}

export interface AttemptEnd {
  row: TaskRow;
  /** The task went back to pending for another attempt. */
  retried: boolean;
}

/**
 * An attempt ended by failure (`failure`): one more attempt counted, the
 * failure recorded, the lease gone; then back to `pending` after the retry
 * delay while attempts remain and `retry` allows, else `failed`. When
 * `cancelIfRequested` (the lease expired), a task whose cancellation was asked
 * for becomes `cancelled` instead: the worker has stopped, as asked.
 */
export function endAttempt(
  row: TaskRow,
  failure: TaskFailure,
  now: Date,
  policy: RetryPolicy,
  { retry, cancelIfRequested }: { retry: boolean; cancelIfRequested: boolean },
): AttemptEnd {
  const attempts = row.attempts + 1;
  const ended = { ...withoutLease(row), attempts, error: failureText(failure) };
  if (cancelIfRequested && row.cancel_requested) return { row: { ...ended, status: "cancelled" }, retried: false };
  if (retry && !row.cancel_requested && attempts < row.max_attempts) {
    const runAt = new Date(now.getTime() + retryDelayMs(policy, attempts));
    return { row: { ...ended, status: "pending", run_at: iso(runAt) }, retried: true };
  }
  return { row: { ...ended, status: "failed" }, retried: false };
}

/**
 * The worker gave the task back (DELETE of its lease): ready again now, with
 * no attempt counted; or `cancelled` when that was asked for (docs/api/leases.md).
 */
export function released(row: TaskRow, now: Date): TaskRow {
  if (row.cancel_requested) return { ...withoutLease(row), status: "cancelled" };
  return { ...withoutLease(row), status: "pending", run_at: iso(now) };
}

/**
 * The deadline passed before the task was final: `failed`, whatever else was
 * going on. An attempt in progress (a lease, live or not) counts as ended.
 */
export function deadlinePassed(row: TaskRow): TaskRow {
  const attempts = row.lease_id === null ? row.attempts : row.attempts + 1;
  return { ...withoutLease(row), status: "failed", attempts, error: failureText(deadlineExceeded) };
}
