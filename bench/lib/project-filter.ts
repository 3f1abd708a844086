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
  const built = shapes.map(([title, filter]) => ({
    title,
    scoped: listStatement(agentList, { ...filter, scopeId: defaultProjectId }),
    plain: listStatement(unscoped, filter),
  }));
  /** Median µs of each shape's statement, on a fresh connection (so a fresh prepare and plan). */
  const time = async (which: "scoped" | "plain") => {
    const db = await connectDatabase(url);
    try {
      const medians: number[] = [];
      for (const shape of built) {
        const { statement, args } = shape[which];
        const times: number[] = [];
        for (let i = 0; i < WARMUP + ROUNDS; i++) {
          const started = process.hrtime.bigint();
          const found = await db.all(statement, args);
          if (found.length === 0) throw new Error(`${shape.title} (${which}) found no rows`);
          if (i >= WARMUP) times.push(Number(process.hrtime.bigint() - started) / 1000);
        }
        medians.push(median(times));
      }
      return medians;
    } finally {
      await db.close();
    }
  };
  // The service's own indexes alone: its plans and times, before and after the lists without the filter
  // are timed on the old indexes (made, timed, dropped), so drift on a shared machine shows in neither.
  const plans: string[] = [];
  const indexed: boolean[] = [];
  for (const shape of built) {
    const plan = await explain(provider, url, shape.scoped.statement, shape.scoped.args);
    indexed.push(!/\bSCAN \w+$|Seq Scan/m.test(plan));
    plans.push(`### ${shape.title}, with the project filter`, "", "```", plan, "```", "");
  }
  const before = await time("scoped");
  let without: number[];
  try {
    for (const sql of oldIndexes) await run(sql);
    if (provider === "postgresql") await adminQuery("ANALYZE agents; ANALYZE agent_metadata", url);
    without = await time("plain");
  } finally {
    for (const sql of dropOld) await run(sql);
  }
  const after = await time("scoped");
  const lines = [
    "## What the project filter costs",
    "",
    `Each shape as the service prepares it (\`project_id = $1\`, all ${rows.toLocaleString("en")} agents in one project: the filter's worst case, it rules nothing out) against the same shape without the filter on the indexes the lists had before projects (made for this comparison, then dropped). Medians of ${ROUNDS} runs through the service's database layer, reading the page's rows as the service does; the filtered lists are timed before and after the others (the mean of both medians), on the service's indexes alone, and their plans are those.`,
    "",
    "| list | with the project filter µs | without µs | ratio | plan with the filter |",
    "|---|---|---|---|---|",
  ];
  const ratios: string[] = [];
  built.forEach((shape, i) => {
    const withFilter = ((before[i] ?? 0) + (after[i] ?? 0)) / 2;
    const plain = without[i] ?? 1;
    lines.push(
      `| ${shape.title} | ${withFilter.toFixed(0)} | ${plain.toFixed(0)} | ${(withFilter / plain).toFixed(2)} | ${indexed[i] ? "index" : "**scan**"} |`,
    );
    ratios.push(`${shape.title.slice(0, 3)} ${(withFilter / plain).toFixed(2)}×${indexed[i] ? "" : " (SCAN)"}`);
  });
  lines.push("", ...plans);
  return {
    lines,
    note: `The project filter on lists at ${rows.toLocaleString("en")} agents, against the same lists without it: ${ratios.join(", ")} (query time, medians; plans with the filter in bench/results/lists-plans-${provider}.md).`,
  };
}
