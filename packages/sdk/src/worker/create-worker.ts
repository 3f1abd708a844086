// The worker: `concurrency` slots, each holding at most one long poll or one
// task at a time, so the worker never polls for more than it can run.
import { Backoff, sleep } from "./backoff.js";
import { ApiError } from "./errors.js";
import { Emitter, type Listener, type WorkerEvents } from "./events.js";
import { Api } from "./http.js";
import { type LeaseHost, LeaseRun } from "./lease-run.js";
import { type Settings, settingsOf, type WorkerOptions } from "./options.js";
import type { Lease } from "./types.js";

export interface StopOptions {
  /**
   * How long running handlers may take to finish (default 30,000 ms). Those
   * still running then see their signal abort, and their tasks are given
   * back (`pending` again, no attempt counted).
   */
  timeoutMs?: number | undefined;
}

export interface Worker<Input, Result> {
  on<Name extends keyof WorkerEvents<Input, Result>>(
    event: Name,
    listener: Listener<WorkerEvents<Input, Result>[Name]>,
  ): this;
  off<Name extends keyof WorkerEvents<Input, Result>>(
    event: Name,
    listener: Listener<WorkerEvents<Input, Result>[Name]>,
  ): this;
  /**
   * Starts taking tasks. Resolves once `stop()` has finished; rejects with an
   * ApiError when the worker had to stop on its own: the service refused its
   * credentials (401, 403), does not know its agent (404), or refused its
   * options (400).
   */
  start(): Promise<void>;
  /** Takes no new task, lets running handlers finish (bounded: `timeoutMs`), gives back the rest. */
  stop(options?: StopOptions): Promise<void>;
}

/** How long a long poll may take beyond its own wait before it counts as lost. */
const pollMarginMs = 30_000;

class LeaseWorker<Input, Result> implements Worker<Input, Result> {
  private state: "new" | "running" | "stopping" | "stopped" = "new";
  private readonly events = new Emitter<WorkerEvents<Input, Result>>();
  private readonly settings: Settings<Input, Result>;
  private readonly api: Api;
  /**
   * Each slot's: ends its long poll (and its waits between polls) when the
   * worker stops. One per slot, as a signal with many listeners is taken
   * for a leak by Node.js.
   */
  private readonly pollers = new Set<AbortController>();
  /** Cuts a drain short when the worker must stop at once. */
  private readonly hurry = new AbortController();
  private readonly runs = new Set<LeaseRun<Input, Result>>();
  private slots: Promise<void>[] = [];
  private stopping: Promise<void> | undefined;
  private failure: ApiError | undefined;
  private readonly ended: Promise<void>;
  private settle: (failure?: ApiError) => void = () => {};

  constructor(options: WorkerOptions<Input, Result>) {
    this.settings = settingsOf(options);
    this.api = new Api(this.settings.baseUrl, this.settings, (error) => this.events.emit("error", error));
    this.ended = new Promise((resolve, reject) => {
      this.settle = (failure) => (failure ? reject(failure) : resolve());
    });
  }

  on<Name extends keyof WorkerEvents<Input, Result>>(
    event: Name,
    listener: Listener<WorkerEvents<Input, Result>[Name]>,
  ) {
    this.events.on(event, listener);
    return this;
  }

  off<Name extends keyof WorkerEvents<Input, Result>>(
    event: Name,
    listener: Listener<WorkerEvents<Input, Result>[Name]>,
  ) {
    this.events.off(event, listener);
    return this;
  }

  start(): Promise<void> {
    if (this.state === "new") {
      this.state = "running";
      const host: LeaseHost<Input, Result> = {
        settings: this.settings,
        api: this.api,
        events: this.events,
        fail: (error) => this.fail(error),
      };
      this.slots = Array.from({ length: this.settings.concurrency }, () => this.slot(host));
    }
    return this.ended;
  }

  stop({ timeoutMs = 30_000 }: StopOptions = {}): Promise<void> {
    if (this.state === "new") {
      this.state = "stopped";
      this.settle();
    }
    this.stopping ??= this.shutDown(timeoutMs);
    return this.stopping;
  }

  private async slot(host: LeaseHost<Input, Result>): Promise<void> {
    const backoff = new Backoff(1000);
    const polling = new AbortController();
    this.pollers.add(polling);
    while (this.state === "running") {
      const lease = await this.poll(backoff, polling.signal);
      if (!lease) continue;
      const run = new LeaseRun(host, lease, Date.now());
      this.runs.add(run);
      // A task granted as the worker began to stop is given straight back.
      await (this.state === "running" ? run.run() : run.release());
      this.runs.delete(run);
    }
  }

  /** The next lease, or undefined when none came within the wait (or the worker is stopping). */
  private async poll(backoff: Backoff, signal: AbortSignal): Promise<Lease<Input, Result> | undefined> {
    const { settings } = this;
    const body = {
      ...settings.selector,
      worker: settings.workerName,
      duration_seconds: settings.leaseSeconds,
      wait_seconds: settings.waitSeconds,
    };
    const attemptMs = settings.waitSeconds * 1000 + pollMarginMs;
    const answer = await this.api.send("POST", settings.leasePath, body, { signal, attemptMs });
    if (!answer || answer.status === 204) return undefined;
    if (answer.status === 201) {
      backoff.reset();
      return answer.body as Lease<Input, Result>;
    }
    const error = new ApiError("POST", settings.leasePath, answer.status, answer.body);
    if (answer.status !== 409) {
      this.fail(error);
      return undefined;
    }
    // The agent is not running (paused or idle): it may be started again, so look again later.
    this.events.emit("error", error);
    await sleep(backoff.next(), signal);
    return undefined;
  }

  private fail(error: ApiError): void {
    if (this.failure || this.state === "stopped") return;
    this.failure = error;
    this.events.emit("error", error);
    this.hurry.abort();
    this.stopping ??= this.shutDown(0);
  }

  private async shutDown(timeoutMs: number): Promise<void> {
    if (this.state === "stopped") return;
    this.state = "stopping";
    for (const polling of this.pollers) polling.abort();
    const drained = Promise.all(this.slots);
    const bound = new AbortController();
    this.hurry.signal.addEventListener("abort", () => bound.abort(), { once: true });
    await Promise.race([drained, sleep(timeoutMs, bound.signal)]);
    bound.abort();
    await Promise.all([...this.runs].map((run) => run.release()));
    await drained;
    this.state = "stopped";
    this.settle(this.failure);
  }
}

/**
 * A worker that takes tasks through leases and runs `handler` on each
 * (docs/api/leases.md): `Input` types `task.input`, `Result` what the
 * handler returns.
 */
export function createWorker<Input = unknown, Result = unknown>(
  options: WorkerOptions<Input, Result>,
): Worker<Input, Result> {
  return new LeaseWorker(options);
}
