import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's metrics (docs/operations.md), served by GET /metrics. Each counter
 * is a module-level value so the code that sees the event counts it in one
 * line (`taskRetries.inc()`), after its transaction committed.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const registers = [registry];

/** Every HTTP request, by route template (never the raw path, so the label set stays small). */
export const httpRequests = new Counter({
  name: "http_requests_total",
  help: "HTTP requests answered, by method, route template and status",
  labelNames: ["method", "route", "status"] as const,
  registers,
});

export const httpRequestDuration = new Histogram({
  name: "http_request_duration_seconds",
  help: "Time from a request's arrival to its response's end, by method, route template and status",
  labelNames: ["method", "route", "status"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers,
});

/** A lease that ran out before its worker finished (the settler ended the attempt). */
export const taskLeasesExpired = new Counter({
  name: "task_leases_expired_total",
  help: "Task leases that expired before their worker finished",
  registers,
});

/** A failed attempt that put its task back to pending for another one. */
export const taskRetries = new Counter({
  name: "task_retries_total",
  help: "Failed attempts after which the task was scheduled to run again",
  registers,
});

/** One per run time a schedule reached (docs/api/schedules.md): `created`, `skipped_overlap` or `skipped_missed`. */
export const scheduleRuns = new Counter({
  name: "schedule_runs_total",
  help: "Run times of schedules, by outcome: a task created, or skipped (overlap, missed)",
  labelNames: ["outcome"] as const,
  registers,
});

/** From a run time to the commit of its task. */
export const scheduleRunLag = new Histogram({
  name: "schedule_run_lag_seconds",
  help: "Time from a schedule's run time to the creation of its task",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
  registers,
});

/** One per delivery attempt's outcome (`succeeded`, `failed`, `disabled`, …: the webhook module's words). */
export const webhookDeliveries = new Counter({
  name: "webhook_deliveries_total",
  help: "Webhook delivery attempts, by outcome",
  labelNames: ["outcome"] as const,
  registers,
});

/** Event streams open in this process: `inc()` when one opens, `dec()` when it closes. */
export const eventStreamsOpen = new Gauge({
  name: "event_streams_open",
  help: "Event streams (SSE) open in this process",
  registers,
});

/** Requests answered 429 by the rate limit. */
export const rateLimited = new Counter({
  name: "rate_limited_total",
  help: "Requests refused with 429 by the rate limit",
  registers,
});

/** Requests refused with 503 because the process was overloaded. */
export const loadShed = new Counter({
  name: "load_shed_total",
  help: "Requests refused with 503 because the process was overloaded",
  registers,
});
