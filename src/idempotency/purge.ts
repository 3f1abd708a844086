import type { Database } from "../db/index.js";
import type { Logger } from "../logger.js";
import { idempotencyStore } from "./sql.js";

// Expired keys cost nothing but space (a claim takes an expired key over
// anyway), so an occasional sweep is enough; every instance may run it.
const EVERY_MS = 10 * 60_000;

/** Deletes expired idempotency keys now and then (docs/http.md's TTL purge), until `stop`. */
export function startIdempotencyPurge({ db, logger }: { db: Database; logger: Logger }) {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = idempotencyStore
      .purge(db)
      .then((purged) => purged > 0 && logger.debug({ purged }, "expired idempotency keys purged"))
      .catch((error: unknown) => logger.warn({ err: error }, "purging expired idempotency keys failed"));
  }, EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
