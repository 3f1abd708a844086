// The query plans of the agents endpoints' list queries: the statements the
// service prepares, explained on the same database with the arguments each
// request gives them.
import Database from "better-sqlite3";
import type { Arg, Statement } from "../../src/db/index.js";
import { postgresArg, sqliteArg } from "../../src/db/values.js";
import { agentList } from "../../src/modules/agents/sql.js";
import { defaultProjectId } from "../../src/resources/acting.js";
import { type ListFilter, listStatement } from "../../src/resources/list-sql.js";
import { adminQuery, type Provider } from "./databases.js";

export interface QueryPlan {
  request: string;
  sql: string;
  plan: string;
}

const base: ListFilter = { skip: 0, limit: 100, order: "asc", include_total: false };
const agents = (filter: Partial<ListFilter>): [Statement, Arg[]] => {
  // The bench's agents are all in the default project.
  const { statement, args } = listStatement(agentList, { ...base, scopeId: defaultProjectId, ...filter });
  return [statement, args];
};
const lists: [string, Statement, Arg[]][] = [
  ["GET /agents?skip=9000&limit=100", ...agents({ skip: 9000 })],
  ["GET /agents?status=running&limit=10", ...agents({ status: "running", limit: 10 })],
  ["GET /agents?status=idle&skip=9000&limit=100", ...agents({ status: "idle", skip: 9000 })],
];

const literal = (value: Arg) => {
  const sent = postgresArg(value);
  return typeof sent === "number" ? String(sent) : `'${String(sent).replace(/'/g, "''")}'`;
};
const oneLine = (sql: string) => sql.replace(/\s+/g, " ").trim();

export async function explain(provider: Provider, url: string, statement: Statement, args: Arg[]): Promise<string> {
  if (provider === "sqlite") {
    const db = new Database(url.replace(/^file:/, ""), { readonly: true });
    const order = statement.sqliteOrder ?? args.map((_, i) => i);
    const rows = db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${statement.sqlite}`)
      .all(...order.map((i) => sqliteArg(args[i])));
    db.close();
    return rows.map((row) => row.detail).join("\n");
  }
  // EXECUTE takes no parentheses when the statement has no parameters (an unfiltered count).
  const values = args.length > 0 ? `(${args.map(literal).join(", ")})` : "";
  const sql = `PREPARE bench_plan AS ${statement.postgresql}; EXPLAIN EXECUTE bench_plan${values}`;
  const results = (await adminQuery(sql, url)) as unknown as { rows: { "QUERY PLAN": string }[] }[];
  return (results[1]?.rows ?? []).map((row) => row["QUERY PLAN"]).join("\n");
}

export async function listQueryPlans(provider: Provider, url: string): Promise<QueryPlan[]> {
  const plans: QueryPlan[] = [];
  for (const [request, statement, args] of lists) {
    const sql = oneLine((provider === "sqlite" ? statement.sqlite : statement.postgresql) ?? "");
    plans.push({ request, sql, plan: await explain(provider, url, statement, args) });
  }
  return plans;
}
