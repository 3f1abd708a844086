import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { promisify } from "node:util";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as PostgresClient } from "./generated/postgresql/client.js";
import { PrismaClient as SqliteClient } from "./generated/sqlite/client.js";

/**
 * Both generated clients have the same models and methods; services are typed
 * against the SQLite one and work with either.
 */
export type Db = SqliteClient;
export type DbProvider = "sqlite" | "postgresql";

/**
 * A second connection through the same Prisma driver adapter, for hot reads
 * only (src/services/read-sql.ts): a query sent there skips the client's
 * per-call query planning. It never writes, so it never waits on a lock.
 */
export type Reader = Awaited<ReturnType<PrismaBetterSQLite3["connect"]>>;
const readers = new WeakMap<object, { reader: Reader; provider: DbProvider }>();

/** The read connection of a client made by connectDatabase (none for a transaction's client). */
export const readerOf = (db: Db) => readers.get(db);

/** Ties the read connection to the client: one `$disconnect()` closes both. */
async function withReader(db: Db, provider: DbProvider, factory: PrismaBetterSQLite3 | PrismaPg): Promise<Db> {
  const reader = await factory.connect();
  readers.set(db, { reader, provider });
  const disconnect = db.$disconnect.bind(db);
  db.$disconnect = async () => {
    await reader.dispose();
    await disconnect();
  };
  return db;
}

export const providerOf = (url: string): DbProvider => (/^postgres(ql)?:/.test(url) ? "postgresql" : "sqlite");

// Prisma clients are proxies (`instanceof` does not see their class), so the
// provider of each client is recorded when it is made.
const providers = new WeakMap<Db, DbProvider>();

/** Which database a client talks to, for the rare statement whose SQL differs. */
export function providerOfClient(db: Db): DbProvider {
  const provider = providers.get(db);
  if (!provider) throw new Error("Not a client made by connectDatabase");
  return provider;
}

const sqlitePath = (url: string) => url.replace(/^file:/, "").split("?")[0] ?? "";

export async function connectDatabase(url: string): Promise<Db> {
  if (providerOf(url) === "postgresql") {
    const client = new PostgresClient({ adapter: new PrismaPg({ connectionString: url }) }) as unknown as Db;
    providers.set(client, "postgresql");
    return withReader(client, "postgresql", new PrismaPg({ connectionString: url }));
  }
  const path = sqlitePath(url);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  // timeout = busy timeout, so several processes can share the file.
  const db = new SqliteClient({ adapter: new PrismaBetterSQLite3({ url: path, timeout: 5000 }) });
  // WAL with synchronous=NORMAL: durable across process crashes, and writes
  // cost a fraction of the default journal's. The adapter keeps one connection.
  await db.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  await db.$queryRawUnsafe("PRAGMA synchronous = NORMAL");
  await db.$queryRawUnsafe("PRAGMA foreign_keys = ON");
  providers.set(db, "sqlite");
  return withReader(db, "sqlite", new PrismaBetterSQLite3({ url: path, timeout: 5000 }));
}

// Prisma's codes for a database that cannot be reached, does not exist, timed
// out, or dropped the connection: the service is unavailable, not broken.
// Reads sent straight through the driver adapter fail with its error kinds instead.
const unavailableCodes = new Set(["P1001", "P1002", "P1003", "P1008", "P1017", "P2024"]);
const unavailableKinds = new Set([
  "DatabaseNotReachable",
  "DatabaseDoesNotExist",
  "SocketTimeout",
  "TooManyConnections",
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  if ("code" in error && typeof error.code === "string" && unavailableCodes.has(error.code)) return true;
  const cause = "cause" in error ? (error.cause as { kind?: unknown } | undefined) : undefined;
  return typeof cause?.kind === "string" && unavailableKinds.has(cause.kind);
}

const run = promisify(execFile);
export const projectRoot = new URL("..", import.meta.url).pathname.replace(/dist\/$/, "");

/** Applies pending migrations with Prisma's CLI (JS schema engine: nothing is downloaded). */
export async function migrateDatabase(url: string): Promise<void> {
  let cliUrl = url;
  if (providerOf(url) === "sqlite") {
    // The CLI runs in the project folder; a relative path means the caller's folder.
    const path = resolve(sqlitePath(url));
    mkdirSync(dirname(path), { recursive: true });
    cliUrl = `file:${path}`;
  }
  await run(process.execPath, [`${projectRoot}node_modules/prisma/build/index.js`, "migrate", "deploy"], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: cliUrl },
  });
}
