import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";

export type Provider = "sqlite" | "postgresql";

/** The databases this run covers: both unless CHAOS_DATABASES names fewer (sqlite, postgresql). */
export const providers: Provider[] = (process.env.CHAOS_DATABASES ?? "sqlite,postgresql")
  .split(",")
  .map((name) => name.trim())
  .filter((name): name is Provider => name === "sqlite" || name === "postgresql");

export const postgresAdminUrl = process.env.CHAOS_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export const sqlitePath = (url: string) => url.replace(/^file:/, "");

export async function adminQuery(sql: string) {
  const client = new pg.Client({ connectionString: postgresAdminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const postgresUrl = (database: string) => {
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${database}`;
  return url.toString();
};

export interface ChaosDatabase {
  provider: Provider;
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database (the service migrates it when it starts). */
export async function emptyDatabase(provider: Provider, label: string): Promise<ChaosDatabase> {
  return createDatabase(provider, label);
}

/**
 * A copy of `template` (a migrated database nothing is connected to), so a
 * scenario starts from a fresh database without paying the migration again.
 */
export async function copyDatabase(template: ChaosDatabase, label: string): Promise<ChaosDatabase> {
  return createDatabase(template.provider, label, template.url);
}

async function createDatabase(provider: Provider, label: string, templateUrl?: string): Promise<ChaosDatabase> {
  const suffix = `${process.pid}_${randomBytes(3).toString("hex")}`;
  if (provider === "postgresql") {
    const name = `chaos_${label}_${suffix}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
    const template = templateUrl ? ` TEMPLATE ${new URL(templateUrl).pathname.slice(1)}` : "";
    await adminQuery(`CREATE DATABASE ${name}${template}`);
    return { provider, url: postgresUrl(name), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  }
  const dir = mkdtempSync(join(tmpdir(), `chaos-${label}-`));
  const file = join(dir, "agents.db");
  if (templateUrl) {
    // Fold the template's WAL into its main file, so copying that one file copies the whole database.
    const source = new Database(sqlitePath(templateUrl));
    source.pragma("wal_checkpoint(TRUNCATE)");
    source.close();
    copyFileSync(sqlitePath(templateUrl), file);
  }
  return { provider, url: `file:${file}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}
