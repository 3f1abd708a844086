import type { IncomingMessage } from "node:http";
import { providerOf } from "../db/index.js";
import { clientAddress } from "../limits/client-address.js";
import { counterStore } from "../limits/counter-store.js";
import { type RequestLimit, requestLimit } from "../limits/request-limit.js";
import { LoginThrottle } from "../modules/auth/login-throttle.js";
import type { AppDeps } from "../trpc/context.js";

export interface Limits {
  /** The client's address (TRUST_PROXY), which both limits count against. */
  clientOf(req: IncomingMessage): string;
  /** RATE_LIMIT_PER_MINUTE per sender; undefined when it is 0 (off). */
  requests?: RequestLimit;
  login: LoginThrottle;
}

/**
 * On PostgreSQL a busy sender's counts go to `rate_limits` at most every this
 * many ms, each trip with all that came meanwhile: a trip costs a round trip
 * and an upsert, which made nearly per request cost (c) a sixth of its
 * throughput. A count waits this long at most, and only while its sender's
 * counts keep coming; 5 ms cost fast GETs a quarter of theirs in waiting.
 */
const POSTGRES_COUNT_GAP_MS = 2;

/** The app's limits, their counts shared by every instance and worker (src/limits/counter-store.ts). */
export function createLimits({ config, auth }: AppDeps): Limits {
  const provider = providerOf(config.databaseUrl);
  const store = counterStore(provider, config.databaseUrl);
  const clientOf = (req: IncomingMessage) => clientAddress(req, config.trustProxy);
  const perMinute = config.rateLimitPerMinute;
  const requests =
    perMinute > 0
      ? requestLimit(
          store({ keyPrefix: "requests", points: perMinute, durationSeconds: 60, countInMemoryWhenDown: true }),
          perMinute,
          auth.requesterOf,
          provider === "postgresql" ? POSTGRES_COUNT_GAP_MS : 0,
        )
      : undefined;
  return { clientOf, requests, login: new LoginThrottle(store) };
}
