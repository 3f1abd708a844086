// Scenarios (k) and (l) and the query plan of every list shape, on a million
// agents and a million tasks with metadata (bench/lib/lists-data.ts).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Arg, Statement } from "../../src/db/index.js";
import { migrateDatabase } from "../../src/db/migrations.js";
import { agentList } from "../../src/modules/agents/sql.js";
import { leaseStatements } from "../../src/modules/leases/sql.js";
import { taskList } from "../../src/modules/tasks/sql.js";
import { defaultProjectId } from "../../src/resources/acting.js";
import { countStatement, type ListFilter, type ListSource, listStatement } from "../../src/resources/list-sql.js";
import { encodeCursor } from "../../src/resources/lists.js";
import type { BenchOptions } from "./args.js";
import type { BenchDatabases } from "./databases.js";
import { concurrencyKeys, listLandmarks, seedLists } from "./lists-data.js";
import { measure } from "./load.js";
import { explain } from "./plans.js";
import { projectFilterCost } from "./project-filter.js";
import { root, startService } from "./targets.js";

interface Context {
  dbs: BenchDatabases;
  options: BenchOptions;
  logFile: string;
  log: (line: string) => void;
}

const base: ListFilter = { skip: 0, limit: 100, order: "asc", include_total: false };
const sample = encodeCursor({ createdAt: "2026-01-01T00:05:00.000Z", id: "80000000-0000-4000-8000-000000000000" });

/**
 * Every shape: status or not, 0–2 metadata pairs, created_after or not, a
 * cursor or not, both orders; for tasks, with a concurrency_key or not.
 */
function shapes(scopeId?: string, columns: (string | undefined)[] = [undefined]): ListFilter[] {
  const filters: ListFilter[] = [];
  for (const column of columns)
    for (const status of [undefined, "running"])
      for (const metadata of [undefined, { tier: "gold" }, { tier: "gold", shard: "0" }] as ListFilter["metadata"][])
        for (const created_after of [undefined, "2026-01-01T00:01:00.000Z"])
          for (const after of [undefined, sample])
            for (const order of ["asc", "desc"] as const)
              filters.push({ ...base, scopeId, status, column, metadata, created_after, after, order });
  return filters;
}

function request(path: string, filter: ListFilter): string {
  const query = [
    filter.status && `status=${filter.status}`,
    filter.column && `concurrency_key=${filter.column}`,
    ...Object.entries(filter.metadata ?? {}).map(([key, value]) => `metadata[${key}]=${value}`),
    filter.created_after && `created_after=${filter.created_after}`,
    filter.after && "after=…",
    filter.order === "desc" && "order=desc",
  ].filter(Boolean);
  return `GET ${path}?${[...query, "limit=100"].join("&")}`;
}

/**
 * How a plan reaches its rows: "ordered" through indexes in the list's
 * order; "sorted" when it finds them through indexes, then sorts them (the
 * planner's choice for a set it estimates small); "scan" when it reads a
 * whole table.
 */
function reading(plan: string): "ordered" | "sorted" | "scan" {
  if (/\bSCAN \w+$|Seq Scan/m.test(plan)) return "scan";
  return /TEMP B-TREE|\bSort\b/.test(plan) ? "sorted" : "ordered";
}

async function plans(ctx: Context, url: string, taskAgent: string) {
  const lines: string[] = [];
  const tally = { ordered: 0, sorted: 0, scan: 0, count: 0 };
  const sources: [string, ListSource, string | undefined, (string | undefined)[]][] = [
    // Every agent of the lists' database is in the default project.
    ["/agents", agentList, defaultProjectId, [undefined]],
    ["/agents/{id}/tasks", taskList, taskAgent, [undefined, "key-7"]],
  ];
  for (const [path, source, scopeId, columns] of sources) {
    for (const filter of shapes(scopeId, columns)) {
      for (const [what, { statement, args }] of [
        ["page", listStatement(source, filter)],
        ["count", countStatement(source, filter)],
      ] as const) {
        if (what === "count" && (filter.after || filter.order === "desc")) continue;
        const plan = await explain(ctx.dbs.provider, url, statement, args);
        // A count reads its whole range, through the index or the table, whichever the planner finds cheaper.
        const how = what === "count" ? "count" : reading(plan);
        tally[how]++;
        const mark = {
          count: "",
          ordered: "",
          sorted: " — sorts the rows its indexes found",
          scan: " — NOT INDEX-SERVED",
        }[how];
        lines.push(
          `### ${request(path, filter)}${what === "count" ? " (X-Total-Count)" : ""}${mark}`,
          "",
          "```",
          plan,
          "```",
          "",
        );
      }
    }
  }
  return { lines, tally };
}

const readings = ({
  tally: { ordered, sorted, scan, count },
}: {
  tally: { ordered: number; sorted: number; scan: number; count: number };
}) =>
  `of ${ordered + sorted + scan} page shapes, ${ordered} read through indexes in list order, ${sorted} find their rows through indexes and sort them, ${scan} read a whole table (and ${count} counts)`;

/**
 * The lease claim's statements (docs/api/leases.md) on the busiest agent, and a
 * pool lease's look at its agents with each kind of selector: a plan that
 * reads the whole tasks table (or, for a selector, the whole agents table)
 * is marked.
 */
export async function claimPlans(ctx: Context, url: string, taskAgent: string) {
  const now = new Date("2026-01-02T00:00:00.000Z");
  const project = "00000000-0000-4000-8000-000000000000";
  const explained: [string, Statement, Arg[]][] = [
    ["The heads of the agent's concurrency keys (leases_heads)", leaseStatements.heads, [taskAgent, now, project]],
    [
      "The agent and its running tasks by key (leases_agent_with_running)",
      leaseStatements.agentWithRunning,
      [taskAgent, project],
    ],
    [
      "Leasing the picked task (leases_claim)",
      leaseStatements.claim,
      [taskAgent, now, "lease", null, now, 60, project, "00000000-0000-4000-8000-000000000001"],
    ],
    ["The agent's next run_at (leases_next_run_at)", leaseStatements.nextRunAt, [taskAgent, now, project]],
    [
      "A pool lease's agents by agent_ids (leases_pool_agents_ids)",
      leaseStatements.poolAgents.ids,
      [project, now, JSON.stringify([taskAgent])],
    ],
    [
      "A pool lease's agents by agent_type (leases_pool_agents_type)",
      leaseStatements.poolAgents.type,
      [project, now, "worker"],
    ],
    [
      "A pool lease's agents by metadata (leases_pool_agents_metadata)",
      leaseStatements.poolAgents.metadata,
      [project, now, '{"tier":"gold"}', "tier", "gold"],
    ],
  ];
  const lines = ["", "## The lease claim", ""];
  let unserved = 0;
  for (const [title, statement, args] of explained) {
    const plan = await explain(ctx.dbs.provider, url, statement, args);
    const whole = /Seq Scan on tasks|\bSCAN (tasks|t|h)$/m.test(plan);
    if (whole) unserved++;
    lines.push(`### ${title}${whole ? " — NOT INDEX-SERVED" : ""}`, "", "```", plan, "```", "");
  }
  return { lines, unserved };
}

/** (k) and (l) against the first page, then the plans; returns the report's notes. */
export async function listsBench(ctx: Context): Promise<string[]> {
  const { dbs, log } = ctx;
  const url = await dbs.fresh("lists");
  await migrateDatabase(url);
  const listRows = ctx.options.listRows;
  log(`${dbs.provider} lists: seeding ${listRows} agents and ${listRows} tasks with metadata`);
  const seeding = Date.now();
  await seedLists(dbs.provider, url, listRows);
  return listsBenchOn(ctx, url, (Date.now() - seeding) / 1000);
}

/** (k), (l) and the plans on a database `seedLists` filled. */
export async function listsBenchOn(ctx: Context, url: string, seedSeconds: number): Promise<string[]> {
  const { dbs, options, log } = ctx;
  const listRows = options.listRows;
  const { deep, taskAgent } = await listLandmarks(dbs.provider, url, listRows - 1000);
  const idsFile = join(dbs.dir, "lists-ids.json");
  writeFileSync(idsFile, "[]");
  const scenarios = [
    ["b", "/agents?limit=100"],
    ["k", `/agents?limit=100&after=${encodeCursor(deep)}`],
    ["l", "/agents?metadata[tier]=gold&limit=100"],
  ] as const;
  const target = await startService("lists", { databaseUrl: url, logFile: ctx.logFile });
  const results: Record<string, { rps: number; p50: number; p99: number; cpu: number; errors: number }> = {};
  try {
    for (const [key, path] of scenarios) {
      const loadOptions = { connections: options.connections, duration: options.growthDuration, idsFile };
      const result = await measure(target, { kind: "path", path }, loadOptions, options.warmup);
      results[key] = {
        rps: result.rps,
        p50: result.p50,
        p99: result.p99,
        cpu: result.cpuPerRequest,
        errors: result.errors,
      };
      log(
        `${dbs.provider} lists (${key}) ${path}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, ${result.cpuPerRequest.toFixed(0)} µs CPU/request`,
      );
    }
  } finally {
    await target.stop();
  }
  const planned = await plans(ctx, url, taskAgent);
  const filterCost = await projectFilterCost(dbs.provider, url, deep, listRows);
  const claims = await claimPlans(ctx, url, taskAgent);
  const file = join(root, `bench/results/lists-plans-${dbs.provider}.md`);
  writeFileSync(
    file,
    [
      `# List query plans on ${dbs.provider}: ${listRows} agents, ${listRows} tasks`,
      "",
      `Every shape of GET /agents and GET /agents/{id}/tasks (the busiest agent, ${Math.round((listRows * 10) / 11)} tasks), as the service prepares it: ${readings(planned)}. A count reads its whole range, through the index or the table, whichever the planner finds cheaper.`,
      "",
      ...filterCost.lines,
      ...planned.lines,
      ...claims.lines,
    ].join("\n"),
  );
  const row = (key: string) => results[key] as (typeof results)[string];
  const ratio = (a: string, b: string) => (row(b).cpu / row(a).cpu).toFixed(2);
  return [
    `(k)/(l) on ${listRows.toLocaleString("en")} agents (seeded in ${seedSeconds.toFixed(0)} s): first page ${row("b").rps.toFixed(0)} req/s (${row("b").cpu.toFixed(0)} µs CPU); (k) deep page by cursor ${row("k").rps.toFixed(0)} req/s (${row("k").cpu.toFixed(0)} µs), CPU ratio ${ratio("b", "k")}× (target ≤ 1.5×); (l) metadata[tier]=gold (1%) ${row("l").rps.toFixed(0)} req/s (${row("l").cpu.toFixed(0)} µs), CPU ratio ${ratio("b", "l")}× (target ≤ 3×); errors ${row("b").errors + row("k").errors + row("l").errors}.`,
    `List plans: ${readings(planned)}; every plan in bench/results/lists-plans-${dbs.provider}.md.`,
    filterCost.note,
    `Lease claim plans (the busiest agent, ${concurrencyKeys} concurrency keys): ${claims.unserved === 0 ? "every statement index-served" : `${claims.unserved} statement(s) NOT INDEX-SERVED`}.`,
  ];
}

/** (k) and (l) run in a full bench, or when named in --scenarios (not under --profile). */
export const listsWanted = (options: BenchOptions) =>
  !options.profile && (options.scenarios.length === 0 || options.scenarios.some((key) => key === "k" || key === "l"));
