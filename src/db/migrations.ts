import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { projectRoot } from "../project-root.js";
import type { Database, Provider } from "./database.js";
import { connectDatabase, providerOf, sqlitePath } from "./index.js";
import { statement } from "./statements.js";

const execFileAsync = promisify(execFile);

/** The migration folders the project ships for `provider`, oldest first. */
export async function shippedMigrations(provider: Provider): Promise<string[]> {
  const entries = await readdir(join(projectRoot, "prisma", provider, "migrations"), { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

const appliedMigrations = statement<{ migration_name: string }>(
  "applied_migrations",
  "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
);

/** Whether the database lacks a migration of this project (a database nothing has migrated lacks them all). */
export async function hasPendingMigrations(db: Database): Promise<boolean> {
  const expected = await shippedMigrations(db.provider);
  let applied: Set<string>;
  try {
    applied = new Set((await db.all(appliedMigrations, [])).map((row) => row.migration_name));
  } catch {
    // No migrations table: a new database.
    return true;
  }
  return expected.some((name) => !applied.has(name));
}

/** Applies pending migrations with Prisma's CLI (JS schema engine: nothing is downloaded). */
export async function migrateDatabase(url: string): Promise<void> {
  let cliUrl = url;
  if (providerOf(url) === "sqlite") {
    // The CLI runs in the project folder; a relative path means the caller's folder.
    const path = resolve(sqlitePath(url));
    mkdirSync(dirname(path), { recursive: true });
    cliUrl = `file:${path}`;
  }
  await execFileAsync(process.execPath, [`${projectRoot}node_modules/prisma/build/index.js`, "migrate", "deploy"], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: cliUrl },
  });
}

/**
 * The database of `url`, migrated first only when it lacks a migration.
 * Prisma's migrate deploy locks a SQLite file exclusively, which fails while
 * any other connection (a running service's, or this process's own) has it
 * open: so an up-to-date database is never migrated, and this process closes
 * its own connections while migrating.
 */
export async function connectMigrated(url: string): Promise<Database> {
  const db = await connectDatabase(url);
  if (!(await hasPendingMigrations(db))) return db;
  await db.close();
  await migrateDatabase(url);
  return connectDatabase(url);
}
