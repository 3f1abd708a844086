import { type Db, readerOf } from "../db.js";
import { Prisma } from "../generated/sqlite/client.js";

type ArgType = Parameters<NonNullable<ReturnType<typeof readerOf>>["reader"]["queryRaw"]>[0]["argTypes"][number];
type Arg = string | number;

/**
 * A read query written once, as the strings around its arguments (like a
 * tagged template's), with each provider's placeholders rendered at start.
 */
export interface ReadQuery {
  sqlite: string;
  postgresql: string;
  parts: readonly string[];
  argTypes: ArgType[];
}

export function readQuery(parts: readonly string[], ...args: ("string" | "int")[]): ReadQuery {
  return {
    sqlite: parts.join("?"),
    postgresql: parts.reduce((sql, part, i) => `${sql}$${i}${part}`),
    parts,
    argTypes: args.map((scalarType) => ({ scalarType, arity: "scalar" })),
  };
}

// Both adapters return DateTime columns as `2026-11-25T22:39:57.123+00:00`.
const utcSuffix = "+00:00";
const isoOf = (value: unknown) =>
  typeof value === "string" && value.length === 29 && value.endsWith(utcSuffix)
    ? `${value.slice(0, 23)}Z`
    : new Date(value as string | Date).toISOString();

/**
 * Rows as arrays in the query's column order, DateTime columns (by index) as
 * ISO strings. Through the read connection when the client has one (Prisma's
 * driver adapter, no query planning); inside a transaction, through the
 * transaction's client, so the read sees its writes.
 */
export async function readRows(db: Db, query: ReadQuery, args: Arg[], dateColumns: number[]): Promise<unknown[][]> {
  const read = readerOf(db);
  const rows = read
    ? (await read.reader.queryRaw({ sql: query[read.provider], args, argTypes: query.argTypes })).rows
    : (await db.$queryRaw<Record<string, unknown>[]>(Prisma.sql(query.parts, ...args))).map(Object.values);
  for (const row of rows) for (const column of dateColumns) row[column] = isoOf(row[column]);
  return rows;
}
