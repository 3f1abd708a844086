import { monitorEventLoopDelay } from "node:perf_hooks";
import type { RequestHandler } from "express";
import { AppError } from "../errors.js";

export interface LoadLimits {
  /** Requests being served at once before new ones are refused. */
  maxInFlight: number;
  /** Event-loop delay (p99 over the last second) beyond which new requests are refused. */
  maxEventLoopDelayMs: number;
}

const overloaded = () =>
  new AppError("unavailable", "The service is overloaded; retry shortly", undefined, { "Retry-After": "1" });

/**
 * Sheds load with 503 + Retry-After when too many requests are in flight or
 * the event loop lags, so the requests already accepted still finish in time
 * instead of everyone timing out.
 */
export function loadShedding({ maxInFlight, maxEventLoopDelayMs }: LoadLimits): RequestHandler {
  let inFlight = 0;
  let lagging = false;
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  const sampler = setInterval(() => {
    lagging = delay.percentile(99) / 1e6 > maxEventLoopDelayMs;
    delay.reset();
  }, 1000);
  sampler.unref();

  return (_req, res, next) => {
    if (inFlight >= maxInFlight || lagging) return next(overloaded());
    inFlight++;
    res.once("close", () => inFlight--);
    next();
  };
}
