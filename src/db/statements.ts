/**
 * A value a statement takes. Dates are stored as Prisma stores them, booleans
 * as each database does; a string array only goes to PostgreSQL statements.
 */
export type Arg = string | number | bigint | boolean | Date | null | readonly (string | null)[];

/**
 * One SQL statement, written once with PostgreSQL's `$1 … $n` placeholders
 * (each provider's own text where the SQL differs), and prepared once per
 * connection: a better-sqlite3 statement, a named statement on PostgreSQL.
 *
 * Rows come back keyed by column name, with the same value types on both
 * databases: DateTime columns as ISO 8601 strings (`…T…Z`), Boolean columns as
 * booleans, BigInt columns as bigints, other integers as numbers. Row and Args
 * are types only: they tie a statement to what it returns and takes.
 */
export interface Statement<Row = unknown, Args extends readonly Arg[] = readonly Arg[]> {
  /** Unique: the prepared statement's name on PostgreSQL. */
  readonly name: string;
  readonly postgresql: string | undefined;
  /** The SQLite text with `?` placeholders … */
  readonly sqlite: string | undefined;
  /** … and the argument each `?` takes, when that is not simply the next one. */
  readonly sqliteOrder: readonly number[] | undefined;
  readonly types?: { row: Row; args: Args };
}

type Sql = string | { sqlite?: string; postgresql?: string };

const names = new Set<string>();

/** `$n` → `?`, remembering which argument each placeholder takes (a `$n` may occur twice). */
function toSqlite(sql: string): { text: string; order: number[] | undefined } {
  const order: number[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    order.push(Number(n) - 1);
    return "?";
  });
  return { text, order: order.every((index, i) => index === i) ? undefined : order };
}

export function statement<Row = unknown, Args extends readonly Arg[] = []>(
  name: string,
  sql: Sql,
): Statement<Row, Args> {
  if (names.has(name)) throw new Error(`Two statements are named ${name}`);
  names.add(name);
  const { sqlite = undefined, postgresql = undefined } =
    typeof sql === "string" ? { sqlite: sql, postgresql: sql } : sql;
  const converted = sqlite === undefined ? undefined : toSqlite(sqlite);
  return { name, postgresql, sqlite: converted?.text, sqliteOrder: converted?.order };
}

/** The text of `statement` for `provider`; a statement written for the other database only is a programming error. */
export function textFor(statement: Statement, provider: "sqlite" | "postgresql"): string {
  const text = statement[provider];
  if (text === undefined) throw new Error(`Statement ${statement.name} has no ${provider} SQL`);
  return text;
}
