import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { connectDatabase, type Database } from "../../src/db/index.js";
import { migrateDatabase } from "../../src/db/migrations.js";
import { importDirectory, sampleDataDir } from "../../src/modules/data/importer/importer.js";

/**
 * Every test file gets its own database, copied from a template migrated once
 * per run: a SQLite file, or a PostgreSQL database (`npm run test:pg`).
 */
export const testProvider = process.env.TEST_DATABASE === "postgresql" ? "postgresql" : "sqlite";
export const postgresAdminUrl = process.env.TEST_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

const withDatabase = (url: string, name: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
};

async function adminQuery(sql: string) {
  const client = new pg.Client({ connectionString: postgresAdminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates and migrates the template; returns what `createTestDatabase` needs and a clean-up. */
export async function createTemplate(): Promise<{ template: string; cleanup: () => Promise<void> }> {
  if (testProvider === "postgresql") {
    const name = `agents_template_${process.pid}_${randomBytes(3).toString("hex")}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    await migrateDatabase(withDatabase(postgresAdminUrl, name));
    return { template: name, cleanup: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  }
  const dir = mkdtempSync(join(tmpdir(), "agents-test-"));
  const file = join(dir, "template.db");
  await migrateDatabase(`file:${file}`);
  return { template: file, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** A database with nothing in it, not even the schema; for tests of start-up. */
export async function createEmptyDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const suffix = randomBytes(6).toString("hex");
  if (testProvider === "postgresql") {
    const name = `agents_empty_${suffix}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    return {
      url: withDatabase(postgresAdminUrl, name),
      drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "agents-empty-"));
  return {
    url: `file:${join(dir, "nested", "agents.db")}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A second template that also holds the sample data, imported once per run,
 * so every data test file starts from its own copy without paying the import.
 */
export async function createDataTemplate(
  template: string,
): Promise<{ template: string; cleanup: () => Promise<void> }> {
  if (testProvider === "postgresql") {
    const name = `agents_data_template_${process.pid}_${randomBytes(3).toString("hex")}`;
    await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    const db = await connectDatabase(withDatabase(postgresAdminUrl, name));
    await importDirectory(db, sampleDataDir);
    await db.close();
    return { template: name, cleanup: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  }
  const dir = mkdtempSync(join(tmpdir(), "agents-test-data-"));
  const file = join(dir, "template.db");
  copyFileSync(template, file);
  const db = await connectDatabase(`file:${file}`);
  await importDirectory(db, sampleDataDir);
  // Closing the last connection folds the WAL into the file that tests copy.
  await db.close();
  return { template: file, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestDatabase {
  url: string;
  db: Database;
  drop: () => Promise<void>;
}

export async function createTestDatabase(template: string): Promise<TestDatabase> {
  const suffix = randomBytes(6).toString("hex");
  if (testProvider === "postgresql") {
    const name = `agents_test_${suffix}`;
    await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    const url = withDatabase(postgresAdminUrl, name);
    const dropDatabase = () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    // Whatever fails on the way (connecting, closing), the database is dropped: none is left behind.
    const db = await connectDatabase(url).catch(async (error: unknown) => {
      await dropDatabase();
      throw error;
    });
    return {
      url,
      db,
      drop: async () => {
        try {
          await db.close();
        } finally {
          await dropDatabase();
        }
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "agents-db-"));
  const file = join(dir, "agents.db");
  copyFileSync(template, file);
  const url = `file:${file}`;
  const db = await connectDatabase(url);
  return {
    url,
    db,
    drop: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
