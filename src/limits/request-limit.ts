import type { IncomingMessage, ServerResponse } from "node:http";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { AppError } from "../errors.js";
import { rateLimited as rateLimitedTotal } from "../metrics/registry.js";
import { coalescingCounter } from "./coalesce.js";

const WINDOW_SECONDS = 60;

export const rateLimited = (retryAfterSeconds: number) =>
  new AppError(
    "rate_limited",
    "Too many requests; try again later",
    { retry_after_s: retryAfterSeconds },
    { "Retry-After": String(retryAfterSeconds) },
  );

const secondsOf = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * RATE_LIMIT_PER_MINUTE per sender, in fixed one-minute windows, announced
 * with the IETF draft's fields (docs/http.md) on every counted response:
 * `RateLimit-Policy: "default";q=<limit>;w=60` and
 * `RateLimit: "default";r=<remaining>;t=<seconds to the window's end>`.
 */
export function requestLimit(
  counter: RateLimiterAbstract,
  perMinute: number,
  senderOf: (req: IncomingMessage) => string,
  /** Trips of one sender's counts to the store start at least this far apart (src/limits/coalesce.ts). */
  gapMs = 0,
) {
  const policy = `"default";q=${perMinute};w=${WINDOW_SECONDS}`;
  const count = coalescingCounter((key, points) => counter.consume(key, points), perMinute, gapMs);
  const announce = (res: ServerResponse, remaining: number, msBeforeNext: number) => {
    res.setHeader("RateLimit-Policy", policy);
    res.setHeader("RateLimit", `"default";r=${remaining};t=${secondsOf(msBeforeNext)}`);
  };

  return {
    /**
     * Counts `requests` requests (the calls of a tRPC batch count one each)
     * against the request's sender and puts the fields on `res`; returns the
     * 429 to answer with once the sender is over its limit.
     */
    async take(req: IncomingMessage, res: ServerResponse, requests = 1): Promise<AppError | undefined> {
      let share: Awaited<ReturnType<typeof count>>;
      try {
        share = await count(senderOf(req), requests);
      } catch {
        // The store failing (the cluster's primary did not answer in time): requests are served
        // uncounted rather than all refused.
        return undefined;
      }
      announce(res, share.remaining, share.msBeforeNext);
      if (share.allowed) return undefined;
      rateLimitedTotal.inc(requests);
      return rateLimited(secondsOf(share.msBeforeNext));
    },
  };
}

export type RequestLimit = ReturnType<typeof requestLimit>;
