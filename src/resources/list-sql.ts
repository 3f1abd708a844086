import { type Arg, type Queryable, type Statement, statement } from "../db/index.js";
import { decodeCursor, encodeCursor, type ListInput, type Page } from "./lists.js";
import { instantOf, pastMillisecond } from "./schemas.js";

/**
 * Lists (docs/http.md) as prepared statements. Each combination of filters is
 * a shape, whose two statements (the page and its count) are written once
 * and prepared like every other statement; the values are arguments. Every
 * shape walks one index in (created_at, id) order, from its first filter
 * onward:
 * - no metadata filter: the table's (created_at, id) index, or with a status
 *   (status, created_at, id); tasks lead with agent_id;
 * - metadata filters: the pairs table's (key, value, created_at, id) index
 *   for the first pair (a copy of created_at lives there for this), the
 *   resource by its primary key, the other pairs by theirs.
 * A cursor is a seek into that index: a deep page costs what the first does.
 * SQLite is told the index (INDEXED BY, and CROSS JOIN for the join order),
 * so the plan never depends on its statistics.
 */
export interface ListSource {
  /** Prefix of the statements' names. */
  name: string;
  table: string;
  columns: string;
  /** The index a page walks on SQLite, without and with a status. */
  indexes: { all: string; byStatus: string };
  pairs: { table: string; id: string; index: string };
  /** A column a list may be filtered on (tasks: concurrency_key), and the index that leads with it after the scope. */
  byColumn?: { column: string; index: string };
  /** The column that scopes the list (tasks: agent_id), present in both tables. */
  scope?: string;
}

export interface ListFilter extends ListInput {
  scopeId?: string;
  status?: string;
  /** The value of source.byColumn's column to filter on. */
  column?: string;
}

interface Built {
  key: string;
  /** The page statement's SQL for each provider, and its arguments. */
  page: { sqlite: string; postgresql: string };
  count: { sqlite: string; postgresql: string };
  args: Arg[];
  /** How many of `args` the count takes (the ones before the cursor). */
  countArgs: number;
}

const qualifiedColumns = new WeakMap<ListSource, string>();
function qualified(source: ListSource): string {
  let columns = qualifiedColumns.get(source);
  if (columns === undefined) {
    columns = source.columns
      .split(",")
      .map((column) => `r.${column.trim()}`)
      .join(", ");
    qualifiedColumns.set(source, columns);
  }
  return columns;
}

function build(source: ListSource, filter: ListFilter): Built {
  const args: Arg[] = [];
  const arg = (value: Arg) => {
    args.push(value);
    return `$${args.length}`;
  };
  const [first, ...others] = Object.entries(filter.metadata ?? {});
  const { pairs, scope } = source;
  const driver = first ? "m" : "r";
  const at = `${driver}.created_at`;
  const id = first ? `m.${pairs.id}` : "r.id";
  const where: string[] = [];
  if (scope) where.push(`${driver}.${scope} = ${arg(filter.scopeId ?? null)}`);
  if (first) where.push(`m.key = ${arg(first[0])} AND m.value = ${arg(first[1])}`);
  if (filter.status !== undefined) where.push(`r.status = ${arg(filter.status)}`);
  if (filter.column !== undefined && source.byColumn) where.push(`r.${source.byColumn.column} = ${arg(filter.column)}`);
  // A task's other pairs are its agent's too: said, it lets PostgreSQL probe them by the agent's pairs index
  // rather than read every pair with that key and value (a value no task has sent it to a full scan).
  const sameScope = scope ? ` AND o.${scope} = m.${scope}` : "";
  for (const [key, value] of others) {
    where.push(
      `EXISTS (SELECT 1 FROM ${pairs.table} o WHERE o.${pairs.id} = m.${pairs.id}${sameScope} AND o.key = ${arg(key)} AND o.value = ${arg(value)})`,
    );
  }
  // Compared as instants, in the stored form (a Date arg). Stored times are whole milliseconds: one is after
  // a time exactly when it is after the millisecond that time falls in, and before a time with more than
  // milliseconds exactly when it is at or before that millisecond (`<=`, not `<` the next one, which for
  // 9999-12-31T23:59:59.9999Z would be a time no database here stores).
  if (filter.created_after) where.push(`${at} > ${arg(instantOf(filter.created_after))}`);
  const beforeOrAt = filter.created_before !== undefined && pastMillisecond(filter.created_before);
  if (filter.created_before) where.push(`${at} ${beforeOrAt ? "<=" : "<"} ${arg(instantOf(filter.created_before))}`);
  const countArgs = args.length;
  const countWhere = where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";
  const desc = filter.order === "desc";
  const cursor = filter.after === undefined ? undefined : decodeCursor(filter.after);
  if (cursor) {
    const [c, i] = [arg(new Date(cursor.createdAt)), arg(cursor.id)];
    const [op, opEq] = desc ? ["<", "<="] : [">", ">="];
    where.push(`${at} ${opEq} ${c} AND (${at} ${op} ${c} OR ${id} ${op} ${i})`);
  }
  const direction = desc ? " DESC" : "";
  const tail = `ORDER BY ${at}${direction}, ${id}${direction} LIMIT ${arg(filter.limit)} OFFSET ${arg(filter.skip)}`;
  const pageWhere = where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";

  const byColumn = filter.column !== undefined && source.byColumn !== undefined;
  const index = byColumn
    ? (source.byColumn?.index as string)
    : filter.status === undefined
      ? source.indexes.all
      : source.indexes.byStatus;
  const from = first
    ? {
        sqlite: `${pairs.table} AS m INDEXED BY ${pairs.index} CROSS JOIN ${source.table} AS r ON r.id = m.${pairs.id}`,
        postgresql: `${pairs.table} AS m JOIN ${source.table} AS r ON r.id = m.${pairs.id}`,
      }
    : { sqlite: `${source.table} AS r INDEXED BY ${index}`, postgresql: `${source.table} AS r` };
  const columns = qualified(source);
  const key = [
    filter.status === undefined ? "" : "s",
    byColumn ? "k" : "",
    first ? `m${others.length + 1}` : "",
    filter.created_after ? "a" : "",
    filter.created_before ? (beforeOrAt ? "bi" : "b") : "",
    cursor ? "c" : "",
    desc ? "d" : "",
  ].join("");
  const sql = (provider: "sqlite" | "postgresql") => ({
    page: `SELECT ${columns} FROM ${from[provider]}${pageWhere} ${tail}`,
    count: `SELECT COUNT(*) AS total FROM ${from[provider]}${countWhere}`,
  });
  const [lite, pg] = [sql("sqlite"), sql("postgresql")];
  return {
    key,
    page: { sqlite: lite.page, postgresql: pg.page },
    count: { sqlite: lite.count, postgresql: pg.count },
    args,
    countArgs,
  };
}

const statements = new Map<string, Statement>();

function cached(name: string, sql: { sqlite: string; postgresql: string }): Statement {
  let found = statements.get(name);
  if (!found) {
    found = statement(name, sql);
    statements.set(name, found);
  }
  return found;
}

/** The page statement of `filter`'s shape and its arguments: for the service, and for the benchmark's plans. */
export function listStatement(source: ListSource, filter: ListFilter) {
  const built = build(source, filter);
  return { statement: cached(`${source.name}_list_${built.key}`, built.page), args: built.args };
}

/** The count statement of `filter`'s shape and its arguments. */
export function countStatement(source: ListSource, filter: ListFilter) {
  const built = build(source, filter);
  return {
    statement: cached(`${source.name}_count_${built.key}`, built.count),
    args: built.args.slice(0, built.countArgs),
  };
}

/** One page of `source` as `filter` asks, with the next page's cursor when it is full, and the total when asked for. */
export async function listPage<Row extends { created_at: string; id: string }, T>(
  db: Queryable,
  source: ListSource,
  filter: ListFilter,
  toItem: (row: Row) => T,
): Promise<Page<T>> {
  const { statement: page, args } = listStatement(source, filter);
  const rows = (await db.all(page, args)) as Row[];
  const last = rows.at(-1);
  const next = last && rows.length === filter.limit ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null;
  const result: Page<T> = { items: rows.map(toItem), next_cursor: next, total: null };
  if (filter.include_total) {
    const count = countStatement(source, filter);
    const row = (await db.get(count.statement, count.args)) as { total: number | bigint | string } | undefined;
    result.total = Number(row?.total ?? 0);
  }
  return result;
}
