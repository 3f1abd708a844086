import { readdirSync } from "node:fs";
import { type Db, migrateDatabase, providerOf } from "../db.js";

const projectRoot = new URL("../..", import.meta.url).pathname.replace(/dist\/$/, "");

/** Migration folders the project ships for the provider of `url`. */
function shippedMigrations(url: string): string[] {
  const folder = `${projectRoot}prisma/${providerOf(url)}/migrations`;
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

async function appliedMigrations(db: Db): Promise<Set<string>> {
  try {
    const rows = await db.$queryRawUnsafe<{ migration_name: string }[]>(
      "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
    );
    return new Set(rows.map((row) => row.migration_name));
  } catch {
    // No migrations table: a database nothing has migrated yet.
    return new Set();
  }
}

/**
 * Migrates the database only when it lacks a migration. Prisma's migrate
 * deploy locks a SQLite file exclusively, which fails while a running service
 * has it open, so a command-line tool must not call it on an up-to-date database.
 */
export async function migrateIfBehind(db: Db, url: string): Promise<void> {
  const applied = await appliedMigrations(db);
  if (shippedMigrations(url).some((name) => !applied.has(name))) await migrateDatabase(url);
}
