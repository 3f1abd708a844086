import type { Database, Provider } from "./database.js";

export type { Database, PrismaClient, Provider, Queryable, Tx } from "./database.js";
export { joined } from "./joined.js";
export { type Arg, type Statement, statement } from "./statements.js";
export { DatabaseUnavailableError, isDatabaseUnavailable } from "./unavailable.js";

export const providerOf = (url: string): Provider => (/^postgres(ql)?:/.test(url) ? "postgresql" : "sqlite");

/** The file of a `file:` URL, as the caller's process sees it. */
export const sqlitePath = (url: string) => url.replace(/^file:/, "").split("?")[0] ?? "";

/**
 * The database of `url`: `file:` for SQLite (the file and its folder are
 * created when missing), `postgresql://` for PostgreSQL (nothing is
 * connected until the first statement, so an unreachable server is reported
 * per request, as 503).
 */
export async function connectDatabase(url: string): Promise<Database> {
  // Each provider's generated client takes a noticeable part of a start to load: only the one in use is.
  if (providerOf(url) === "postgresql") return (await import("./postgresql.js")).connectPostgres(url);
  return (await import("./sqlite.js")).connectSqlite(sqlitePath(url));
}
