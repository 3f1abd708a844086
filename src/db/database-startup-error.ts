import { resolve } from "node:path";
import { codeOf, messageOf, StartupError } from "../startup-error.js";
import { providerOf, sqlitePath } from "./index.js";
import { DatabaseUnavailableError } from "./unavailable.js";

function sqliteCause(error: unknown): string {
  const code = codeOf(error);
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EROFS" || code === "SQLITE_READONLY") return "the file system or the file is read-only";
  if (code?.startsWith("SQLITE_CANTOPEN"))
    return "cannot open or create the file (does its folder exist and is it writable?)";
  if (code?.startsWith("SQLITE_BUSY")) return "another process kept it locked too long";
  return messageOf(error);
}

function postgresCause(error: unknown, timeoutSeconds: number): string {
  const code = codeOf(error);
  const message = messageOf(error);
  if (code === "ECONNREFUSED") return "connection refused (is the server running?)";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host not found";
  if (code === "ETIMEDOUT" || /timeout|terminated/i.test(message)) return `no answer within ${timeoutSeconds} s`;
  // The server's own words (a missing database, a refused role): plain text, never a secret.
  return message;
}

/**
 * What went wrong connecting to or migrating the database of `url`, as one
 * line naming DATABASE_URL; the password never appears.
 */
export function databaseStartupError(url: string, error: unknown, timeoutSeconds: number): StartupError {
  if (error instanceof StartupError) return error;
  // The driver's own error says why; the wrapper only says "unavailable".
  if (error instanceof DatabaseUnavailableError && error.cause !== undefined) {
    return databaseStartupError(url, error.cause, timeoutSeconds);
  }
  if (providerOf(url) === "sqlite") {
    const file = resolve(sqlitePath(url));
    return new StartupError(`cannot use the SQLite database ${file} (DATABASE_URL): ${sqliteCause(error)}`, error);
  }
  const { hostname, port, pathname } = new URL(url);
  const where = `${hostname}:${port || 5432}${pathname}`;
  return new StartupError(
    `cannot use the PostgreSQL database ${where} (DATABASE_URL): ${postgresCause(error, timeoutSeconds)}`,
    error,
  );
}
