// What the project filter costs on lists at a million rows: each list shape as
// the service prepares it (`project_id = $1`, walking the indexes that lead
// with project_id) against the same shape without the filter, walking the
// indexes the lists had before projects (made for this, then dropped), timed
// through the service's own database layer on the same database.
import Database from "better-sqlite3";
import { connectDatabase } from "../../src/db/index.js";
import { agentList } from "../../src/modules/agents/sql.js";
import { defaultProjectId } from "../../src/resources/acting.js";
import { type ListFilter, type ListSource, listStatement } from "../../src/resources/list-sql.js";
import { encodeCursor } from "../../src/resources/lists.js";
import { adminQuery, type Provider } from "./databases.js";
import { explain } from "./plans.js";

/** The agents' list as it was before projects: no project column, its indexes without it. */
const unscoped: ListSource = {
  ...agentList,
  name: "bench_agents_unscoped",
  indexes: { all: "bench_unscoped_created_at_id", byStatus: "bench_unscoped_status_created_at_id" },
  pairs: { ...agentList.pairs, index: "bench_unscoped_pairs_key_value_created_at_agent_id" },
  scope: undefined,
};
const oldIndexes = [
  "CREATE INDEX IF NOT EXISTS bench_unscoped_created_at_id ON agents (created_at, id)",
  "CREATE INDEX IF NOT EXISTS bench_unscoped_status_created_at_id ON agents (status, created_at, id)",
  "CREATE INDEX IF NOT EXISTS bench_unscoped_pairs_key_value_created_at_agent_id ON agent_metadata (key, value, created_at, agent_id)",
];
const dropOld = [
  "DROP INDEX IF EXISTS bench_unscoped_created_at_id",
  "DROP INDEX IF EXISTS bench_unscoped_status_created_at_id",
  "DROP INDEX IF EXISTS bench_unscoped_pairs_key_value_created_at_agent_id",
];

const ROUNDS = 300;
const WARMUP = 30;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/** The report's section (markdown lines) and one note for the bench report. */
export async function projectFilterCost(
  provider: Provider,
  url: string,
  deep: { createdAt: string; id: string },
  rows: number,
): Promise<{ lines: string[]; note: string }> {
  const base: ListFilter = { skip: 0, limit: 100, order: "asc", include_total: false };
  const shapes: [string, ListFilter][] = [
    ["(b) GET /agents?limit=100", base],
    ["(k) GET /agents?after=… (a page deep in the list)", { ...base, after: encodeCursor(deep) }],
    ["(d) GET /agents?status=running&limit=10", { ...base, status: "running", limit: 10 }],
    ["(l) GET /agents?metadata[tier]=gold&limit=100", { ...base, metadata: { tier: "gold" } }],
  ];
  const run = async (sql: string) => {
    if (provider === "postgresql") await adminQuery(sql, url);
    else {
      const db = new Database(url.replace(/^file:/, ""));
      db.exec(sql);
      db.close();
    }
  };
  for (const sql of oldIndexes) await run(sql);
  if (provider === "postgresql") await adminQuery("ANALYZE agents; ANALYZE agent_metadata", url);
  const lines = [
    "## What the project filter costs",
    "",
    `Each shape as the service prepares it (\`project_id = $1\`, all ${rows.toLocaleString("en")} agents in one project: the filter's worst case, it rules nothing out) against the same shape without the filter on the indexes the lists had before projects (made for this comparison, then dropped). Median of ${ROUNDS} runs each, interleaved, through the service's database layer; the page's rows are read, as the service reads them.`,
    "",
    "| list | with the project filter µs | without µs | ratio | plan with the filter |",
    "|---|---|---|---|---|",
  ];
  const plans: string[] = [];
  const ratios: string[] = [];
  const db = await connectDatabase(url);
  try {
    for (const [title, filter] of shapes) {
      const scoped = listStatement(agentList, { ...filter, scopeId: defaultProjectId });
      const plain = listStatement(unscoped, filter);
      const times = { scoped: [] as number[], plain: [] as number[] };
      for (let i = 0; i < WARMUP + ROUNDS; i++) {
        for (const [which, { statement, args }] of [
          ["scoped", scoped],
          ["plain", plain],
        ] as const) {
          const started = process.hrtime.bigint();
          const found = await db.all(statement, args);
          const micros = Number(process.hrtime.bigint() - started) / 1000;
          if (found.length === 0) throw new Error(`${title} (${which}) found no rows`);
          if (i >= WARMUP) times[which].push(micros);
        }
      }
      const [withFilter, without] = [median(times.scoped), median(times.plain)];
      const plan = await explain(provider, url, scoped.statement, scoped.args);
      const indexed = !/\bSCAN \w+$|Seq Scan/m.test(plan);
      lines.push(
        `| ${title} | ${withFilter.toFixed(0)} | ${without.toFixed(0)} | ${(withFilter / without).toFixed(2)} | ${indexed ? "index" : "**scan**"} |`,
      );
      ratios.push(`${title.slice(0, 3)} ${(withFilter / without).toFixed(2)}×${indexed ? "" : " (SCAN)"}`);
      plans.push(`### ${title}, with the project filter`, "", "```", plan, "```", "");
    }
  } finally {
    await db.close();
    for (const sql of dropOld) await run(sql);
  }
  lines.push("", ...plans);
  return {
    lines,
    note: `The project filter on lists at ${rows.toLocaleString("en")} agents, against the same lists without it: ${ratios.join(", ")} (query time, medians; plans with the filter in bench/results/lists-plans-${provider}.md).`,
  };
}
