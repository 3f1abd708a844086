import type { Db } from "../db.js";

// A database that does not answer within this long counts as down: a health
// check must answer quickly even when the database hangs.
const CHECK_TIMEOUT_MS = 2_000;

/** True when the database answers a trivial query in time. */
export async function databaseAnswers(db: Db, timeoutMs = CHECK_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const query = db.$queryRawUnsafe("SELECT 1").then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
