import type { JsonValue } from "./types.js";

export interface NonRetryableErrorOptions {
  /** The error's `code` on the task (1–100 characters); default "non_retryable". */
  code?: string | undefined;
  /** Any JSON, stored as the error's `details`; default null. */
  details?: JsonValue | undefined;
  cause?: unknown;
}

/**
 * Thrown by a handler, fails its task for good: reported with `retry: false`,
 * whatever attempts remain. Any other throw is reported with `retry: true`.
 */
export class NonRetryableError extends Error {
  override readonly name: string = "NonRetryableError";
  readonly code: string;
  readonly details: JsonValue;

  constructor(message: string, options: NonRetryableErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? "non_retryable";
    this.details = options.details ?? null;
  }
}

/** A NonRetryableError, also one from another copy of this package (whose class is not this one). */
export const isNonRetryable = (error: unknown): error is NonRetryableError =>
  error instanceof NonRetryableError || (error instanceof Error && error.name === "NonRetryableError");

/** What the service answered to a request the worker could not take as it came. */
export class ApiError extends Error {
  override readonly name: string = "ApiError";

  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    /** The answer's body: JSON parsed, else its text. */
    readonly body: unknown,
  ) {
    super(`${method} ${path} answered ${status}${describe(body)}${advice(status)}`);
  }

  /** The service refused the credentials (401, 403): nothing the worker sends will be accepted. */
  get refusedCredentials(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** The service's own words: `{"detail"}` or `{"error","message"}` (docs/errors.md), else the text. */
function describe(body: unknown): string {
  if (typeof body === "string") return body ? `: ${body.slice(0, 200)}` : "";
  if (typeof body !== "object" || body === null) return "";
  const { detail, message } = body as { detail?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : typeof detail === "string" ? detail : "";
  return text ? `: ${text}` : "";
}

function advice(status: number): string {
  if (status === 401) return " (the worker stopped: its token is missing, invalid or expired)";
  if (status === 403) return " (the worker stopped: its API key is not accepted)";
  return "";
}

/** Why a handler's signal aborted: `signal.reason` is one of these. */
export class TaskAbortedError extends Error {
  override readonly name: string = "TaskAbortedError";

  constructor(
    /**
     * `cancelled`: cancellation was asked for (the worker acknowledges it once the handler ends);
     * `lease_lost`: the lease is gone (expired, released, or the task settled elsewhere), so the
     * task may already be someone else's and whatever the handler returns is dropped;
     * `stopping`: `stop()` ran out of time and gave the task back.
     */
    readonly kind: "cancelled" | "lease_lost" | "stopping",
    taskId: string,
  ) {
    super(
      {
        cancelled: `task ${taskId}: cancellation was asked for`,
        lease_lost: `task ${taskId}: the lease is gone`,
        stopping: `task ${taskId}: the worker is stopping and gave the task back`,
      }[kind],
    );
  }
}
