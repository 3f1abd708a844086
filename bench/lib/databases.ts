import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";

export type Provider = "sqlite" | "postgresql";

/** Creates, copies and finally removes every database one bench run uses. */
export interface BenchDatabases {
  provider: Provider;
  /** A new, empty database (the service migrates it on start). */
  fresh(name: string): Promise<string>;
  /** A copy of another database of this run, made while nothing is connected to it. */
  copy(fromUrl: string, name: string): Promise<string>;
  cleanup(): Promise<void>;
  dir: string;
}

export const postgresAdminUrl = process.env.BENCH_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

const sqlitePath = (url: string) => url.replace(/^file:/, "");

export async function adminQuery(sql: string, url = postgresAdminUrl) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

export function benchDatabases(provider: Provider): BenchDatabases {
  const dir = mkdtempSync(join(tmpdir(), "agents-bench-"));
  if (provider === "sqlite") {
    return {
      provider,
      dir,
      fresh: async (name) => `file:${join(dir, `${name}.db`)}`,
      copy: async (fromUrl, name) => {
        // Fold the WAL into the main file so one file copy is the whole database.
        const source = new Database(sqlitePath(fromUrl));
        source.pragma("wal_checkpoint(TRUNCATE)");
        source.close();
        const to = join(dir, `${name}.db`);
        copyFileSync(sqlitePath(fromUrl), to);
        return `file:${to}`;
      },
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const prefix = `agents_bench_${process.pid}_${randomBytes(2).toString("hex")}`;
  const created: string[] = [];
  const urlOf = (database: string) => {
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const create = async (name: string, template?: string) => {
    const database = `${prefix}_${name}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
    await adminQuery(`CREATE DATABASE ${database}${template ? ` TEMPLATE ${template}` : ""}`);
    created.push(database);
    return urlOf(database);
  };
  return {
    provider,
    dir,
    fresh: (name) => create(name),
    copy: (fromUrl, name) => create(name, new URL(fromUrl).pathname.slice(1)),
    cleanup: async () => {
      for (const database of created.reverse()) await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
