import type { Arg } from "./statements.js";

/*
 * Values in and out of raw statements, in exactly the forms Prisma uses, so
 * rows written by statements and by Prisma compare and sort the same.
 */

/** Prisma stores a SQLite DateTime as ISO 8601 text with `+00:00`: `2026-11-25T22:39:57.123+00:00`. */
export const sqliteTimestamp = (date: Date) => `${date.toISOString().slice(0, 23)}+00:00`;

export function sqliteArg(value: Arg | undefined): unknown {
  if (value instanceof Date) return sqliteTimestamp(value);
  if (typeof value === "boolean") return value ? 1 : 0;
  if (Array.isArray(value)) throw new TypeError("SQLite statements take no arrays");
  return value ?? null;
}

/**
 * PostgreSQL stores DateTime as `timestamp(3)` (no zone) holding UTC. An ISO
 * string is sent, never a Date: pg would render a Date in the process's
 * local zone, which a `timestamp` silently drops.
 */
export const postgresArg = (value: Arg | undefined): unknown =>
  value instanceof Date ? value.toISOString() : (value ?? null);

/** `2026-11-25T22:39:57.123+00:00` (SQLite, as Prisma writes it) → `2026-11-25T22:39:57.123Z`. */
export function isoFromSqlite(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" && value.length === 29 && value.endsWith("+00:00")) return `${value.slice(0, 23)}Z`;
  if (typeof value === "bigint") return new Date(Number(value)).toISOString();
  return new Date(value as string | number).toISOString();
}

/**
 * PostgreSQL's text of a `timestamp`: `2026-11-25 22:39:57.12` (trailing zeros
 * of the fraction dropped, no fraction at all on a whole second) → ISO UTC.
 */
export function isoFromPostgres(text: string): string {
  const fraction = text.length > 20 ? text.slice(20, 23) : "";
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction.padEnd(3, "0")}Z`;
}
