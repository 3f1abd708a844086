import type { Lease, Task } from "./types.js";

/** What a worker tells its listeners, by event name. */
export interface WorkerEvents<Input, Result> {
  /** A task was leased; its handler starts now. */
  lease: { task: Task<Input, Result>; lease: Lease<Input, Result> };
  /** The handler returned and the task is `succeeded` (`task` as the service answered). */
  succeeded: { task: Task<Input, Result>; result: Result };
  /** The handler threw and the failure was reported: `retrying` when the task is `pending` again. */
  failed: { task: Task<Input, Result>; error: unknown; retrying: boolean };
  /** Cancellation was asked for, the handler stopped, and the task is `cancelled`. */
  cancelled: { task: Task<Input, Result> };
  /**
   * The worker dropped the task: its lease was gone at a renewal (`lease_lost`), ran out while
   * renewals failed (`lease_expired`), or the service refused the handler's late outcome
   * (`refused`). The service settles the task; nothing of it is reported.
   */
  lost: { task: Task<Input, Result>; reason: "lease_lost" | "lease_expired" | "refused" };
  /** `stop()` ran out of time and gave the task back: it is `pending` again. */
  released: { task: Task<Input, Result> };
  /**
   * Something went wrong: a request that is retried (network, 429, 5xx), an answer the worker
   * could not use, a listener that threw, or what stopped the worker (401, 403: `start()`
   * rejects with the same error).
   */
  error: Error;
}

export type Listener<T> = (event: T) => void;

/** A small typed emitter: the runtimes the worker runs on do not share one. */
export class Emitter<Events extends { error: Error }> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  on<Name extends keyof Events>(event: Name, listener: Listener<Events[Name]>): void {
    const listeners = this.listeners.get(event) ?? new Set();
    listeners.add(listener as Listener<never>);
    this.listeners.set(event, listeners);
  }

  off<Name extends keyof Events>(event: Name, listener: Listener<Events[Name]>): void {
    this.listeners.get(event)?.delete(listener as Listener<never>);
  }

  /** Calls each listener; one that throws is reported as an `error` (a throwing `error` listener, not at all). */
  emit<Name extends keyof Events>(event: Name, value: Events[Name]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        (listener as Listener<Events[Name]>)(value);
      } catch (error) {
        if (event !== "error") this.emit("error", error instanceof Error ? error : new Error(String(error)));
      }
    }
  }
}
