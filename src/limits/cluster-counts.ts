import { RateLimiterClusterMaster } from "rate-limiter-flexible";

/**
 * In the primary of WEB_CONCURRENCY: keeps the counts the workers' limits
 * share when no database holds them (SQLite), answering each worker's count
 * over the cluster's IPC channel.
 */
export function shareCountsWithWorkers(): void {
  new RateLimiterClusterMaster();
}
