import type { ServerResponse } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { AppError } from "../../errors.js";
import { loadShed } from "../../metrics/registry.js";

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
 * instead of everyone timing out. `admit` answers nothing itself: the caller
 * writes the refusal in the format of the route that was hit.
 */
export function admission({ maxInFlight, maxEventLoopDelayMs }: LoadLimits) {
  let inFlight = 0;
  let lagging = false;
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  const sampler = setInterval(() => {
    lagging = delay.percentile(99) / 1e6 > maxEventLoopDelayMs;
    delay.reset();
  }, 1000);
  sampler.unref();
  const release = () => {
    inFlight--;
  };

  return {
    /** Counts the request in until its response closes; the refusal when it cannot be served now. */
    admit(res: ServerResponse): AppError | undefined {
      if (inFlight >= maxInFlight || lagging) {
        loadShed.inc();
        return overloaded();
      }
      inFlight++;
      res.once("close", release);
      return undefined;
    },
  };
}
