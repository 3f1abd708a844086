import cluster from "node:cluster";
import { shareCountsWithWorkers } from "./limits/cluster-counts.js";
import type { Logger } from "./logger.js";

/**
 * The primary of WEB_CONCURRENCY > 1: forks the workers that share the port
 * and serve requests. SIGTERM/SIGINT is passed on to every worker, each of
 * which finishes its in-flight requests; the primary exits 0 once all are
 * gone. A worker that dies on its own takes the others down and the primary
 * exits 1, so a supervisor sees the failure instead of a half-sized service.
 */
export function superviseWorkers(count: number, logger: Logger) {
  let alive = count;
  let stopping = false;
  let exitCode = 0;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, "stopping workers");
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM");
  };

  cluster.on("exit", (worker, code, signal) => {
    alive--;
    // While stopping, a worker still starting up has no handler yet and dies of the signal itself.
    if (!stopping || (code !== 0 && signal !== "SIGTERM")) {
      logger.error({ pid: worker.process.pid, code, signal }, "worker exited unexpectedly");
      exitCode = 1;
      stop("worker exited");
    }
    if (alive === 0) {
      logger.info("stopped");
      logger.flush();
      process.exit(exitCode);
    }
  });
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  shareCountsWithWorkers();
  for (let i = 0; i < count; i++) cluster.fork();
}
