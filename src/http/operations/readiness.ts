import { type Database, statement } from "../../db/index.js";
import { hasPendingMigrations } from "../../db/migrations.js";

// A database that has not answered by then counts as unavailable: a probe
// must answer well within its own timeout (scripts/healthcheck.mjs waits 4 s).
const CHECK_TIMEOUT_MS = 2_000;

const ping = statement<{ ok: number }>("readiness_ping", "SELECT 1 AS ok");

export interface Readiness {
  ready: boolean;
  body: { status: "ready" | "unavailable"; database: "ok" | "unavailable"; migrations: "ok" | "pending" | "unknown" };
}

const withTimeout = <T>(work: Promise<T>) =>
  Promise.race([
    work,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timed out")), CHECK_TIMEOUT_MS).unref()),
  ]);

/**
 * What GET /readyz answers (docs/operations.md): ready when the database answers and
 * no migration is pending, never once shutdown has begun.
 */
export async function readiness(db: Database, shuttingDown: boolean): Promise<Readiness> {
  let database: Readiness["body"]["database"] = "ok";
  let migrations: Readiness["body"]["migrations"] = "unknown";
  try {
    await withTimeout(db.get(ping, []));
    migrations = (await withTimeout(hasPendingMigrations(db))) ? "pending" : "ok";
  } catch {
    database = "unavailable";
  }
  const ready = !shuttingDown && database === "ok" && migrations === "ok";
  return { ready, body: { status: ready ? "ready" : "unavailable", database, migrations } };
}
