import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { projectRoot } from "../project-root.js";
import { CONNECT_TIMEOUT_MS } from "./connect-timeout.js";
import type { Database, Provider } from "./database.js";
import { databaseStartupError } from "./database-startup-error.js";
import { connectDatabase, providerOf, sqlitePath } from "./index.js";
import { type Migration, migrateSqlite } from "./sqlite-migrate.js";
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

async function shippedSql(provider: Provider): Promise<Migration[]> {
  const names = await shippedMigrations(provider);
  const folder = join(projectRoot, "prisma", provider, "migrations");
  return Promise.all(
    names.map(async (name) => ({ name, sql: await readFile(join(folder, name, "migration.sql"), "utf8") })),
  );
}

const appliedMigrations = statement<{ migration_name: string }>(
  "applied_migrations",
  "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
);

/** SQLite's and PostgreSQL's words for a table that does not exist. */
const isMissingTable = (error: unknown) =>
  (typeof error === "object" && error !== null && "code" in error && error.code === "42P01") ||
  (error instanceof Error && /no such table/.test(error.message));

/**
 * Whether the database lacks a migration of this project (a database nothing
 * has migrated lacks them all). A database that does not answer is an error,
 * not a pending migration.
 */
export async function hasPendingMigrations(db: Database): Promise<boolean> {
  const expected = await shippedMigrations(db.provider);
  let applied: Set<string>;
  try {
    applied = new Set((await db.all(appliedMigrations, [])).map((row) => row.migration_name));
  } catch (error) {
    if (isMissingTable(error)) return true;
    throw error;
  }
  return expected.some((name) => !applied.has(name));
}

/**
 * Applies pending migrations. SQLite: in one transaction of this process
 * (src/db/sqlite-migrate.ts), safe beside running services and other
 * processes migrating at once. PostgreSQL: Prisma's CLI (JS schema engine:
 * nothing is downloaded), which takes an advisory lock for the same reason.
 */
export async function migrateDatabase(url: string): Promise<void> {
  if (providerOf(url) === "sqlite") {
    migrateSqlite(sqlitePath(url), await shippedSql("sqlite"));
    return;
  }
  await migratePostgres(url);
}

// Ours, not the key Prisma's CLI locks itself (which would then wait for us forever).
const POSTGRES_MIGRATION_LOCK = 7_314_620_581;

/**
 * Prisma's CLI, one process at a time: processes starting at once wait on an
 * advisory lock, and the ones after the first find nothing left to apply
 * (two concurrent `migrate deploy` runs fail one of them).
 */
async function migratePostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [POSTGRES_MIGRATION_LOCK]);
    let applied = new Set<string>();
    try {
      const { rows } = await client.query<{ migration_name: string }>(appliedMigrations.postgresql as string);
      applied = new Set(rows.map((row) => row.migration_name));
    } catch (error) {
      if (!isMissingTable(error)) throw error;
    }
    const expected = await shippedMigrations("postgresql");
    if (!expected.some((name) => !applied.has(name))) return;
    await execFileAsync(process.execPath, [`${projectRoot}node_modules/prisma/build/index.js`, "migrate", "deploy"], {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: url },
    });
  } finally {
    // Ending the session releases the lock.
    await client.end();
  }
}

/**
 * The database of `url`, migrated first only when it lacks a migration (so
 * an up-to-date database never waits for Prisma's CLI, seconds on
 * PostgreSQL). Any failure is a StartupError: one line naming DATABASE_URL.
 */
export async function connectMigrated(url: string): Promise<Database> {
  let db: Database | undefined;
  try {
    db = await connectDatabase(url);
    if (!(await hasPendingMigrations(db))) return db;
    await migrateDatabase(url);
    return db;
  } catch (error) {
    await db?.close().catch(() => {});
    throw databaseStartupError(url, error, CONNECT_TIMEOUT_MS / 1000);
  }
}
