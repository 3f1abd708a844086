import { readdirSync } from "node:fs";
import { connectDatabase, type Db, migrateDatabase, providerOf } from "../db.js";

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
 * A client for `url`, migrating the database first only when it lacks a
 * migration. Prisma's migrate deploy locks a SQLite file exclusively, which
 * fails while any other connection (a running service's, or this one's) has
 * it open: so an up-to-date database is never migrated, and this process
 * closes its own connection while migrating.
 */
export async function connectMigrated(url: string): Promise<Db> {
  const db = await connectDatabase(url);
  const applied = await appliedMigrations(db);
  if (shippedMigrations(url).every((name) => applied.has(name))) return db;
  await db.$disconnect();
  await migrateDatabase(url);
  return connectDatabase(url);
}
