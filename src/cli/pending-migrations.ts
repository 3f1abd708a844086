import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type Db, type DbProvider, projectRoot } from "../db.js";

/**
 * Whether the database lacks a migration of this project. The importer asks
 * before migrating because Prisma's migrate cannot run on a SQLite file that
 * a running server holds open, and an up-to-date database needs nothing.
 */
export async function hasPendingMigrations(db: Db, provider: DbProvider): Promise<boolean> {
  const entries = await readdir(join(projectRoot, "prisma", provider, "migrations"), { withFileTypes: true });
  const expected = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  try {
    const rows = await db.$queryRawUnsafe<{ migration_name: string }[]>(
      "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
    );
    const applied = new Set(rows.map((row) => row.migration_name));
    return expected.some((name) => !applied.has(name));
  } catch {
    // No migrations table: a new database.
    return true;
  }
}
