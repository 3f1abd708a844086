import type { Lease, Task } from "./types.js";

/** What a handler gets beside its task. */
export interface HandlerContext<Input, Result> {
  /**
   * Aborts when the handler should stop: cancellation was asked for, the
   * lease is gone, or `stop()` ran out of time. `signal.reason` is a
   * TaskAbortedError saying which.
   */
  signal: AbortSignal;
  /** The lease the task is held by, as the service granted it. */
  lease: Lease<Input, Result>;
}

/** Runs one task: its return value is the task's `result`; a throw fails it (see NonRetryableError). */
export type Handler<Input, Result> = (
  task: Task<Input, Result>,
  context: HandlerContext<Input, Result>,
) => Result | Promise<Result>;

interface CommonOptions<Input, Result> {
  /** The service's address, e.g. "https://agents.example.com" (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `X-API-Key`. */
  apiKey?: string | undefined;
  /** A bearer token, sent as `Authorization: Bearer …`. */
  token?: string | undefined;
  /** Tasks run at once, and so long polls at most (one per free slot); default 1. */
  concurrency?: number | undefined;
  /** A lease's duration, 5–3600 s (renewed at a third of it); default 60. */
  leaseSeconds?: number | undefined;
  /** How long one long poll waits for a task, 1–20 s; default 20. */
  waitSeconds?: number | undefined;
  /** The leases' `worker`, for people reading them (1–100 characters); default "sdk-" and 8 random hex digits. */
  workerName?: string | undefined;
  handler: Handler<Input, Result>;
}

/** Whose tasks the worker takes: one agent's, or (a pool) those of every running agent matching a selector. */
export type AgentSelector =
  | { agentId: string; agentType?: never; agentIds?: never; metadata?: never }
  | { agentType: string; agentId?: never; agentIds?: never; metadata?: never }
  | { agentIds: readonly string[]; agentId?: never; agentType?: never; metadata?: never }
  | { metadata: Readonly<Record<string, string>>; agentId?: never; agentType?: never; agentIds?: never };

export type WorkerOptions<Input, Result> = CommonOptions<Input, Result> & AgentSelector;

/** The options checked, with their defaults. */
export interface Settings<Input, Result> {
  baseUrl: string;
  apiKey: string | undefined;
  token: string | undefined;
  concurrency: number;
  leaseSeconds: number;
  waitSeconds: number;
  workerName: string;
  handler: Handler<Input, Result>;
  /** Where a lease is asked for, and the body's selector. */
  leasePath: string;
  selector: Record<string, unknown>;
}

function integerIn(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < min || chosen > max) {
    throw new RangeError(`createWorker: ${name} must be an integer from ${min} to ${max}, not ${chosen}`);
  }
  return chosen;
}

function selectorOf(options: AgentSelector): Pick<Settings<unknown, unknown>, "leasePath" | "selector"> {
  const given = (["agentId", "agentType", "agentIds", "metadata"] as const).filter((key) => options[key] !== undefined);
  if (given.length !== 1) {
    throw new TypeError(
      `createWorker: give exactly one of agentId, agentType, agentIds or metadata${given.length ? `, not ${given.join(" and ")}` : ""}`,
    );
  }
  if (options.agentId !== undefined) {
    return { leasePath: `/agents/${encodeURIComponent(options.agentId)}/leases`, selector: {} };
  }
  // A pool lease (docs/api/leases.md): the lease's agent_id says whose task it is.
  if (options.agentType !== undefined) return { leasePath: "/leases", selector: { agent_type: options.agentType } };
  if (options.agentIds !== undefined) return { leasePath: "/leases", selector: { agent_ids: [...options.agentIds] } };
  return { leasePath: "/leases", selector: { metadata: { ...options.metadata } } };
}

export function settingsOf<Input, Result>(options: WorkerOptions<Input, Result>): Settings<Input, Result> {
  if (typeof options.baseUrl !== "string" || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError(`createWorker: baseUrl must be an http(s) URL, not ${String(options.baseUrl)}`);
  }
  if (typeof options.handler !== "function") throw new TypeError("createWorker: handler must be a function");
  const workerName = options.workerName ?? `sdk-${crypto.randomUUID().slice(0, 8)}`;
  if (workerName.length < 1 || workerName.length > 100) {
    throw new RangeError("createWorker: workerName must have 1 to 100 characters");
  }
  return {
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    token: options.token,
    concurrency: integerIn("concurrency", options.concurrency, 1, 1, 10_000),
    leaseSeconds: integerIn("leaseSeconds", options.leaseSeconds, 60, 5, 3600),
    waitSeconds: integerIn("waitSeconds", options.waitSeconds, 20, 1, 20),
    workerName,
    handler: options.handler,
    ...selectorOf(options),
  };
}
