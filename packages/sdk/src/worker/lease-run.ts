// One leased task, from its lease to its report (docs/api/leases.md): the
// handler runs while the lease is renewed at a third of its duration; a
// renewal that shows `cancel_requested`, or finds the lease gone, aborts the
// handler's signal. The outcome is reported through the lease, except for a
// lost lease, whose task the service settles: a late result is never sent.
import { sleep } from "./backoff.js";
import { ApiError, isNonRetryable, NonRetryableError, TaskAbortedError } from "./errors.js";
import type { Emitter, WorkerEvents } from "./events.js";
import type { Answer, Api } from "./http.js";
import type { Settings } from "./options.js";
import type { JsonValue, Lease, Task } from "./types.js";

/** What a lease run needs of its worker. */
export interface LeaseHost<Input, Result> {
  settings: Settings<Input, Result>;
  api: Api;
  events: Emitter<WorkerEvents<Input, Result>>;
  /** Stops the worker: the service refused its credentials. */
  fail(error: ApiError): void;
}

type Outcome<Result> = { returned: true; value: Result } | { returned: false; error: unknown };

/** One request's limit: a report or a renewal that hangs this long is tried again. */
const attemptMs = 30_000;
/** How long giving a task back may take before the worker leaves it to expire. */
const releaseMs = 5_000;

const settle = <Result>(run: () => Result | Promise<Result>): Promise<Outcome<Result>> =>
  Promise.resolve()
    .then(run)
    .then(
      (value): Outcome<Result> => ({ returned: true, value }),
      (error: unknown): Outcome<Result> => ({ returned: false, error }),
    );

export class LeaseRun<Input, Result> {
  private state: "working" | "reporting" | "done" | "lost" | "released" = "working";
  private task: Task<Input, Result>;
  private cancelRequested = false;
  /** When the lease ends unless renewed, by this machine's clock. */
  private expiresAt: number;
  private readonly handlerAbort = new AbortController();
  /** Aborts the report once the lease is lost or given back. */
  private readonly gone = new AbortController();
  /** Ends the renewals. */
  private readonly ended = new AbortController();
  private readonly released: Promise<undefined>;
  private markReleased: () => void = () => {};
  private readonly leasePath: string;
  private readonly taskPath: string;

  constructor(
    private readonly host: LeaseHost<Input, Result>,
    private readonly lease: Lease<Input, Result>,
    receivedAt: number,
  ) {
    this.task = lease.task;
    // The service's own duration, from this machine's clock: no clock skew between the two.
    this.expiresAt = receivedAt + (Date.parse(lease.expires_at) - Date.parse(lease.created_at));
    this.released = new Promise((resolve) => {
      this.markReleased = () => resolve(undefined);
    });
    const agent = `/agents/${encodeURIComponent(lease.agent_id)}`;
    this.leasePath = `${agent}/leases/${encodeURIComponent(lease.id)}`;
    this.taskPath = `${agent}/tasks/${encodeURIComponent(lease.task_id)}`;
  }

  /**
   * Runs the handler and reports its outcome. Resolves once the handler has
   * ended (even after its lease was lost: a slot is free only when its work
   * is), or at once when the task is given back.
   */
  async run(): Promise<void> {
    const { events, settings } = this.host;
    events.emit("lease", { task: this.task, lease: this.lease });
    const renewing = this.renew();
    const handled = settle(() => settings.handler(this.task, { signal: this.handlerAbort.signal, lease: this.lease }));
    const outcome = await Promise.race([handled, this.released]);
    if (outcome && this.state === "working") await this.report(outcome);
    this.ended.abort();
    await renewing;
  }

  /** Gives the task back untouched (`stop()` ran out of time, or the worker failed). */
  async release(): Promise<void> {
    const live = this.state === "working" || this.state === "reporting";
    if (live) this.state = "released";
    this.gone.abort();
    this.ended.abort();
    this.abortHandler("stopping");
    this.markReleased();
    if (!live) return;
    const answer = await this.host.api.send("DELETE", this.leasePath, undefined, {
      signal: new AbortController().signal,
      deadline: Math.min(this.expiresAt, Date.now() + releaseMs),
      attemptMs: releaseMs,
    });
    if (answer?.status === 204) this.host.events.emit("released", { task: this.task });
  }

  private async renew(): Promise<void> {
    const { api, settings } = this.host;
    const body = { duration_seconds: settings.leaseSeconds };
    while (await sleep((settings.leaseSeconds * 1000) / 3, this.ended.signal)) {
      const sentAt = Date.now();
      const options = { signal: this.ended.signal, deadline: this.expiresAt, attemptMs };
      const answer = await api.send("PATCH", this.leasePath, body, options);
      if (this.ended.signal.aborted) return;
      if (!answer) return this.drop("lease_expired");
      if (answer.status === 200) {
        this.expiresAt = sentAt + settings.leaseSeconds * 1000;
        this.task = (answer.body as Lease<Input, Result>).task;
        if (this.task.cancel_requested && !this.cancelRequested) {
          this.cancelRequested = true;
          this.abortHandler("cancelled");
        }
      } else if (answer.status === 404) {
        // While reporting, the report's own answer says what became of the task.
        if (this.state === "working") this.drop("lease_lost");
        return;
      } else {
        const error = new ApiError("PATCH", this.leasePath, answer.status, answer.body);
        if (error.refusedCredentials) return this.host.fail(error);
        this.host.events.emit("error", error);
      }
    }
  }

  private async report(outcome: Outcome<Result>, refusedOnce = false): Promise<void> {
    this.state = "reporting";
    const body = this.reportOf(outcome);
    let answer: Answer | undefined;
    try {
      answer = await this.host.api.send("PATCH", this.taskPath, body, { signal: this.gone.signal, attemptMs });
    } catch (error) {
      // A result JSON cannot hold (a BigInt, a cycle): the task fails for good.
      return this.report({ returned: false, error: nonRetryable("invalid_result", error) }, refusedOnce);
    }
    if (!answer || this.state !== "reporting") return;
    const { status } = answer;
    if (status === 200) return this.finished(answer.body as Task<Input, Result>, outcome);
    const error = new ApiError("PATCH", this.taskPath, status, answer.body);
    if (error.refusedCredentials) return this.host.fail(error);
    // 404 (the task is gone) and 409 (the lease ended first): the service settled the task.
    if (status === 404 || status === 409) return this.drop("refused");
    // A result or error the service does not take (too large): reported as a failure, once.
    if (!refusedOnce && (status === 400 || status === 413) && "result" in body) {
      return this.report({ returned: false, error: nonRetryable("result_refused", error) }, true);
    }
    this.host.events.emit("error", error);
    this.drop("refused");
  }

  private reportOf(outcome: Outcome<Result>): Record<string, unknown> {
    const lease_id = this.lease.id;
    if (outcome.returned) return { lease_id, status: "succeeded", result: outcome.value ?? null };
    if (this.cancelRequested) return { lease_id, status: "cancelled" };
    return { lease_id, status: "failed", error: failureOf(outcome.error), retry: !isNonRetryable(outcome.error) };
  }

  private finished(task: Task<Input, Result>, outcome: Outcome<Result>): void {
    this.state = "done";
    this.task = task;
    const { events } = this.host;
    if (outcome.returned) events.emit("succeeded", { task, result: outcome.value });
    else if (task.status === "cancelled") events.emit("cancelled", { task });
    else events.emit("failed", { task, error: outcome.error, retrying: task.status === "pending" });
  }

  private drop(reason: WorkerEvents<Input, Result>["lost"]["reason"]): void {
    if (this.state !== "working" && this.state !== "reporting") return;
    this.state = "lost";
    this.gone.abort();
    this.ended.abort();
    this.abortHandler("lease_lost");
    this.host.events.emit("lost", { task: this.task, reason });
  }

  private abortHandler(kind: TaskAbortedError["kind"]): void {
    if (!this.handlerAbort.signal.aborted) this.handlerAbort.abort(new TaskAbortedError(kind, this.task.id));
  }
}

const nonRetryable = (code: string, cause: unknown) =>
  new NonRetryableError(cause instanceof Error ? cause.message : String(cause), { code, cause });

/** The task's `error` for what a handler threw: its `code` if it has one, its message, a NonRetryableError's details. */
function failureOf(error: unknown): { code: string; message: string; details: JsonValue } {
  const own = (error as { code?: unknown } | null)?.code;
  const code = typeof own === "string" && own !== "" ? own : "handler_error";
  const message = error instanceof Error ? error.message || error.name : String(error);
  const details = isNonRetryable(error) ? error.details : null;
  return { code: text(code, 100), message: text(message || "handler failed", 10_000), details };
}

/** At most `max` code points of well-formed text without U+0000, as the service takes it. */
const text = (value: string, max: number) =>
  Array.from(value.replace(/[\uD800-\uDFFF]/gu, "\uFFFD").replaceAll("\u0000", "\uFFFD"))
    .slice(0, max)
    .join("");
