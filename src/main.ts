import cluster from "node:cluster";
import { setTimeout as sleep } from "node:timers/promises";
import { superviseWorkers } from "./cluster.js";
import { ConfigError, loadConfig } from "./config.js";
import type { Database } from "./db/index.js";
import { createHttpServer } from "./http/server.js";
import { gracefulShutdown } from "./http/shutdown.js";
import { createLogger } from "./logger.js";
import { listenStartupError } from "./startup-error.js";

async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  // Tracing patches http, express and pg as they load, so it starts before the
  // app's modules are imported; when it is off, none of its code is loaded.
  const stopTracing = config.otlpEndpoint ? (await import("./telemetry/tracing.js")).startTracing() : undefined;
  const { createApp } = await import("./app.js");
  const { connectDatabase } = await import("./db/index.js");
  const { connectMigrated } = await import("./db/migrations.js");
  const { seedSampleData } = await import("./modules/data/importer/seed.js");
  const { startSettler } = await import("./modules/leases/settler.js");
  const { startScheduler } = await import("./modules/schedules/scheduler.js");
  const { startWebhookDelivery } = await import("./modules/webhooks/delivery/start.js");
  const { startEventPurger } = await import("./modules/events/purge.js");
  const { startAuditPurge } = await import("./modules/audit/service.js");
  const { startIdempotencyPurge } = await import("./idempotency/purge.js");
  const logger = createLogger(config.logLevel);

  // Migrations and the sample data happen once, before any worker exists.
  let primaryDb: Database | undefined;
  if (cluster.isPrimary) {
    primaryDb = await connectMigrated(config.databaseUrl);
    if (config.webConcurrency > 1) {
      if (config.seedSampleData) await seedSampleData(primaryDb, logger);
      await primaryDb.close();
      superviseWorkers(config.webConcurrency, logger);
      return;
    }
  }
  const db = primaryDb ?? (await connectDatabase(config.databaseUrl));
  if (cluster.isPrimary && config.seedSampleData) await seedSampleData(db, logger);
  // Aborted when shutdown begins: long polls answer at once instead of holding the server open.
  const shutdown = new AbortController();
  const settler = startSettler({ db, policy: config.taskRetry, logger });
  const scheduler = startScheduler({ db, logger });
  const webhooks = startWebhookDelivery({ db, config, logger });
  const purger = startEventPurger({ db, retentionMs: config.events.retentionMs, logger });
  const auditPurge = startAuditPurge({ db, retentionMs: config.audit.retentionMs, logger });
  const idempotencyPurge = startIdempotencyPurge({ db, logger });
  const server = createHttpServer(createApp({ db, config, logger, shutdown: shutdown.signal }), config.server, logger);
  // Before the listening line, so a port in use is a failed start (exit 1), never a start that ends.
  server.once("error", (error) => failStart(listenStartupError(error, config.host, config.port)));
  const graceful = gracefulShutdown(server);
  // A burst of new connections waits in the kernel's accept queue rather than being dropped
  // (which a client only notices after seconds of SYN retries); the kernel caps it at somaxconn.
  server.listen({ port: config.port, host: config.host, backlog: 4096 }, () => {
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    logger.info({ host: config.host, port }, `listening on http://${config.host}:${port}`);
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    shutdown.abort();
    void graceful
      .drain(config.server.shutdownGraceMs, () =>
        logger.warn("in-flight requests did not finish in time; closing them"),
      )
      .then(async () => {
        const cleanup = async () => {
          await settler.stop();
          await scheduler.stop();
          await webhooks.stop();
          await purger.stop();
          await auditPurge.stop();
          await idempotencyPurge.stop();
          await db.close();
          await stopTracing?.();
        };
        // These wait on the database: one that stopped answering (dropped, unreachable) must not
        // keep the process from exiting, so they get one more grace period, no more.
        const finished = await Promise.race([
          cleanup().then(
            () => true,
            (error: unknown) => {
              logger.warn({ err: error }, "stopping background work or closing the database failed");
              return true;
            },
          ),
          sleep(config.server.shutdownGraceMs).then(() => false),
        ]);
        if (!finished) logger.warn("stopping background work or closing the database did not finish in time");
        logger.info("stopped");
        logger.flush();
        process.exit(0);
      });
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/** One line on stderr and exit status 1, so a supervisor sees the failure and the cause (docs/operations.md). */
function failStart(error: unknown): never {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

main().catch(failStart);
