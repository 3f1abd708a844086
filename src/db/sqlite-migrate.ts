import { createHash, randomUUID } from "node:crypto";
import BetterSqlite3 from "better-sqlite3";
import { retryWhileBusy } from "./sqlite-connection.js";

export interface Migration {
  name: string;
  sql: string;
}

// Another process migrating the same file holds the write lock this long at most.
const LOCK_WAIT_MS = 60_000;

// Prisma's own bookkeeping table, so `prisma migrate status` and `deploy` agree with what ran here.
const migrationsTable = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`;

/** Prisma's timestamp format in that table. */
const stamp = () => new Date().toISOString().replace("Z", "+00:00");

/**
 * Applies the migrations the file lacks, all in one transaction that holds
 * the write lock from the start (BEGIN IMMEDIATE): of several processes
 * starting at once, one applies them and the others, once it committed,
 * find nothing left to do. Running services keep their connections; Prisma's
 * CLI would need the file to itself. Foreign keys are off on this connection
 * so that a migration that rebuilds a table never cascades a delete into the
 * rows that refer to it; they are checked before the commit instead.
 * Returns the names applied.
 */
export function migrateSqlite(path: string, migrations: readonly Migration[]): string[] {
  const db = new BetterSqlite3(path, { timeout: LOCK_WAIT_MS });
  try {
    retryWhileBusy(() => db.pragma("journal_mode = WAL"), LOCK_WAIT_MS);
    db.pragma("foreign_keys = OFF");
    retryWhileBusy(() => db.exec("BEGIN IMMEDIATE"), LOCK_WAIT_MS);
    try {
      db.exec(migrationsTable);
      const applied = new Set(
        db
          .prepare<[], { migration_name: string }>(
            "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
          )
          .all()
          .map((row) => row.migration_name),
      );
      const record = db.prepare(
        `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
         VALUES (?, ?, ?, ?, ?, 1)`,
      );
      const pending = migrations.filter((migration) => !applied.has(migration.name));
      for (const { name, sql } of pending) {
        const startedAt = stamp();
        db.exec(sql);
        record.run(randomUUID(), createHash("sha256").update(sql).digest("hex"), stamp(), name, startedAt);
      }
      const violations = db.pragma("foreign_key_check") as unknown[];
      if (violations.length > 0) throw new Error(`the migrations leave ${violations.length} broken foreign keys`);
      db.exec("COMMIT");
      return pending.map((migration) => migration.name);
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  } finally {
    db.close();
  }
}
