import BetterSqlite3 from "better-sqlite3";
import type { Arg, Statement } from "./statements.js";
import { textFor } from "./statements.js";
import { isoFromSqlite, sqliteArg } from "./values.js";

type Convert = (value: unknown) => unknown;

interface Prepared {
  statement: BetterSqlite3.Statement<unknown[], Record<string, unknown>>;
  order: readonly number[] | undefined;
  /** Columns whose values change form on the way out (TEXT columns need nothing). */
  converters: [column: string, convert: Convert][];
}

const toBoolean: Convert = (value) => (value === null ? null : value !== 0n && value !== 0);
const toNumber: Convert = (value) => (typeof value === "bigint" ? Number(value) : value);

/**
 * What each column's declared type asks for. Integers come out as bigints
 * (safe integers: a BIGINT keeps every digit) and become numbers unless the
 * column is a BIGINT, so rows have the same types as on PostgreSQL.
 */
function converterFor(declaredType: string | null): Convert | undefined {
  switch (declaredType?.toUpperCase()) {
    case "TEXT":
      return undefined;
    case "DATETIME":
      return isoFromSqlite;
    case "BOOLEAN":
      return toBoolean;
    case "BIGINT":
      return undefined;
    default:
      return toNumber;
  }
}

/** One better-sqlite3 connection and its statements, each prepared on first use and kept. */
export class SqliteConnection {
  private readonly prepared = new Map<string, Prepared>();

  constructor(readonly handle: BetterSqlite3.Database) {
    handle.defaultSafeIntegers(true);
  }

  private prepare(statement: Statement): Prepared {
    let prepared = this.prepared.get(statement.name);
    if (!prepared) {
      const compiled = this.handle.prepare<unknown[], Record<string, unknown>>(textFor(statement, "sqlite"));
      const converters = compiled.reader
        ? compiled.columns().flatMap((column): [string, Convert][] => {
            const convert = converterFor(column.type);
            return convert ? [[column.name, convert]] : [];
          })
        : [];
      prepared = { statement: compiled, order: statement.sqliteOrder, converters };
      this.prepared.set(statement.name, prepared);
    }
    return prepared;
  }

  /** Whether the statement only reads (better-sqlite3 asks SQLite). */
  readsOnly(statement: Statement): boolean {
    return this.prepare(statement).statement.readonly;
  }

  all<Row>(statement: Statement<Row>, args: readonly Arg[]): Row[] {
    const prepared = this.prepare(statement);
    const rows = prepared.statement.all(bind(prepared, args));
    for (const row of rows) convert(prepared, row);
    return rows as Row[];
  }

  get<Row>(statement: Statement<Row>, args: readonly Arg[]): Row | undefined {
    const prepared = this.prepare(statement);
    const row = prepared.statement.get(bind(prepared, args));
    if (row) convert(prepared, row);
    return row as Row | undefined;
  }

  run(statement: Statement, args: readonly Arg[]): number {
    const prepared = this.prepare(statement);
    return prepared.statement.run(bind(prepared, args)).changes;
  }

  close(): void {
    this.prepared.clear();
    this.handle.close();
  }
}

function bind(prepared: Prepared, args: readonly Arg[]): unknown[] {
  const values = args.map(sqliteArg);
  return prepared.order ? prepared.order.map((index) => values[index]) : values;
}

function convert(prepared: Prepared, row: Record<string, unknown>): void {
  for (const [column, convertValue] of prepared.converters) row[column] = convertValue(row[column]);
}

/** A connection to the file at `path`; the busy timeout lets several processes share it. */
export function openSqlite(path: string, pragmas: string[]): SqliteConnection {
  const handle = new BetterSqlite3(path, { timeout: 5000 });
  for (const pragma of pragmas) retryWhileBusy(() => handle.pragma(pragma), 5000);
  return new SqliteConnection(handle);
}

/**
 * Runs `work` again while SQLite answers SQLITE_BUSY, for up to `waitMs`.
 * Switching a new file to WAL takes a lock for which SQLite may answer busy
 * at once, without its busy timeout: with several processes starting on one
 * new file, that is one of them failing its start. Start-up only: it blocks.
 */
export function retryWhileBusy<T>(work: () => T, waitMs: number): T {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return work();
    } catch (error) {
      const busy = (error as { code?: string }).code?.startsWith("SQLITE_BUSY");
      if (!busy || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    }
  }
}
