import packageJson from "../../../package.json" with { type: "json" };
import { type Database, statement } from "../../db/index.js";

// A database that does not answer within this long counts as down: a health
// check must answer quickly even when the database hangs.
const CHECK_TIMEOUT_MS = 2_000;

const selectOne = statement<{ one: number }>("health_select_one", "SELECT 1 AS one");

/** True when the database answers a trivial query in time. */
export async function databaseAnswers(db: Database, timeoutMs = CHECK_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const query = db.get(selectOne, []).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The body of v1's health check (docs/api/data.md), checked for real each time. */
export async function healthReport(db: Database) {
  if (!(await databaseAnswers(db))) return { ok: false, body: { status: "unavailable", database: "unreachable" } };
  const uptime = Math.floor(process.uptime());
  return { ok: true, body: { status: "ok", database: "ok", version: packageJson.version, uptime_s: uptime } };
}
