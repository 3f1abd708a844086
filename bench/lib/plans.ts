// The query plans of the agents endpoints' list queries, for the SQL Prisma
// really sends: the queries are captured from the client's query events and
// explained on the same database.
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import Database from "better-sqlite3";
import type { Db } from "../../src/db.js";
import { PrismaClient as PostgresClient } from "../../src/generated/postgresql/client.js";
import { PrismaClient as SqliteClient } from "../../src/generated/sqlite/client.js";
import type { AgentListInput } from "../../src/schemas/agents.js";
import { agentsService } from "../../src/services/agents.js";
import { adminQuery, type Provider } from "./databases.js";

export interface QueryPlan {
  request: string;
  sql: string;
  plan: string;
}

const lists: [string, AgentListInput][] = [
  ["GET /agents?skip=9000&limit=100", { skip: 9000, limit: 100 }],
  ["GET /agents?status=running&limit=10", { skip: 0, limit: 10, status: "running" }],
  ["GET /agents?status=idle&skip=9000&limit=100", { skip: 9000, limit: 100, status: "idle" }],
];

interface QueryEvent {
  query: string;
  params: string;
}

const literal = (value: unknown) =>
  typeof value === "number" ? String(value) : `'${String(value).replace(/'/g, "''")}'`;

async function explain(provider: Provider, url: string, { query, params }: QueryEvent): Promise<string> {
  const values = JSON.parse(params) as unknown[];
  if (provider === "sqlite") {
    const db = new Database(url.replace(/^file:/, ""), { readonly: true });
    const rows = db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${query}`).all(...values);
    db.close();
    return rows.map((row) => row.detail).join("\n");
  }
  const name = "bench_plan";
  const sql = `PREPARE ${name} AS ${query}; EXPLAIN EXECUTE ${name}(${values.map(literal).join(", ")})`;
  const results = (await adminQuery(sql, url)) as unknown as { rows: { "QUERY PLAN": string }[] }[];
  return (results[1]?.rows ?? []).map((row) => row["QUERY PLAN"]).join("\n");
}

export async function listQueryPlans(provider: Provider, url: string): Promise<QueryPlan[]> {
  const log = [{ emit: "event", level: "query" }] as const;
  const client =
    provider === "sqlite"
      ? new SqliteClient({ adapter: new PrismaBetterSQLite3({ url: url.replace(/^file:/, "") }), log: [...log] })
      : new PostgresClient({ adapter: new PrismaPg({ connectionString: url }), log: [...log] });
  const events: QueryEvent[] = [];
  (client as unknown as { $on(event: "query", listener: (e: QueryEvent) => void): void }).$on("query", (event) =>
    events.push(event),
  );
  const plans: QueryPlan[] = [];
  try {
    for (const [request, input] of lists) {
      events.length = 0;
      await agentsService.list(client as unknown as Db, input);
      const select = events.find((event) => /^\s*SELECT/i.test(event.query));
      if (!select) throw new Error(`no SELECT captured for ${request}`);
      plans.push({ request, sql: select.query, plan: await explain(provider, url, select) });
    }
  } finally {
    await client.$disconnect();
  }
  return plans;
}
