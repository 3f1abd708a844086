/** The database cannot be reached or refuses work for now: the service is unavailable (503), not broken. */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super("The database is unavailable", { cause });
    this.name = "DatabaseUnavailableError";
  }
}

// Prisma's codes for a database that cannot be reached, does not exist, timed
// out, or dropped the connection.
const prismaCodes = new Set(["P1001", "P1002", "P1003", "P1008", "P1017", "P2024"]);
// The same, as Prisma's driver adapters report them.
const adapterKinds = new Set(["DatabaseNotReachable", "DatabaseDoesNotExist", "SocketTimeout", "TooManyConnections"]);
// The same from the drivers themselves (src/db's statements): the network's
// codes, and PostgreSQL's SQLSTATEs for a connection problem (class 08), too
// many connections, a server shutting down or starting, a missing database.
const driverCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "53300",
  "57P01",
  "57P02",
  "57P03",
  "3D000",
]);

const codeOf = (error: object) => ("code" in error && typeof error.code === "string" ? error.code : undefined);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  if (error instanceof DatabaseUnavailableError) return true;
  const code = codeOf(error);
  if (code !== undefined) {
    if (prismaCodes.has(code) || driverCodes.has(code) || code.startsWith("08")) return true;
    // Another process held SQLite's write lock for longer than the busy timeout.
    if (code.startsWith("SQLITE_BUSY")) return true;
  }
  const cause = "cause" in error ? (error.cause as { kind?: unknown } | undefined) : undefined;
  return typeof cause?.kind === "string" && adapterKinds.has(cause.kind);
}
