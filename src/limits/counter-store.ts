import cluster from "node:cluster";
import pg from "pg";
import {
  type RateLimiterAbstract,
  RateLimiterCluster,
  RateLimiterMemory,
  RateLimiterPostgres,
} from "rate-limiter-flexible";
import type { Provider } from "../db/index.js";

export interface CounterOptions {
  /** Names the counter; keys of different counters never meet. */
  keyPrefix: string;
  /** What one key may consume per window. */
  points: number;
  durationSeconds: number;
  /**
   * On PostgreSQL, an unreachable database falls back to counting in this
   * process's memory. For the request limit; the login throttle wants every
   * count in the database or nothing.
   */
  countInMemoryWhenDown?: boolean;
}

/** A connection or two is plenty for one upsert per request; the app's own pool is left to the app. */
const POOL_SIZE = 4;

/**
 * Where fixed-window counters live so that every process serving the API
 * sees the same counts: on PostgreSQL the `rate_limits` table (one upsert per
 * count, made by rate-limiter-flexible, whose table the migration creates);
 * in a worker of WEB_CONCURRENCY on SQLite the primary's memory (src/cluster.ts
 * serves it over IPC); in a lone SQLite process its own memory.
 */
export function counterStore(provider: Provider, databaseUrl: string) {
  let pool: pg.Pool | undefined;
  const postgresPool = () => {
    if (!pool) {
      // Idle connections close by themselves, so the pool never holds a stopping process open.
      pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_SIZE, allowExitOnIdle: true });
      // A connection the server closed is dropped; without a listener the error would end the process.
      pool.on("error", () => {});
    }
    return pool;
  };

  return (options: CounterOptions): RateLimiterAbstract => {
    const { keyPrefix, points, durationSeconds: duration } = options;
    if (provider === "postgresql") {
      return new RateLimiterPostgres({
        storeClient: postgresPool(),
        storeType: "pool",
        tableName: "rate_limits",
        tableCreated: true,
        keyPrefix,
        points,
        duration,
        // A key already over its limit is refused from this process's memory until its
        // window ends: a flood of refused requests costs no query. Refusals count too, so
        // such a key gets back under only by `delete` (which clears this process's block)
        // or when attempts still pending are given back after a database failure: rare
        // enough to leave the block as it is.
        inMemoryBlockOnConsumed: points + 1,
        ...(options.countInMemoryWhenDown && {
          insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
        }),
      });
    }
    if (cluster.isWorker) return new RateLimiterCluster({ keyPrefix, points, duration, timeoutMs: 3000 });
    return new RateLimiterMemory({ keyPrefix, points, duration });
  };
}

export type CounterStore = ReturnType<typeof counterStore>;
