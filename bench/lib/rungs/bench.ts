import { readFileSync } from "node:fs";
import type { BenchOptions } from "../args.js";
import type { BenchDatabases } from "../databases.js";
import { type LoadResult, measure } from "../load.js";
import { type Summary, summarise } from "../stats.js";
import { startBaseline, startRung, startService, type Target } from "../targets.js";

/**
 * The rungs scenario: GET /agents/{id} over random seeded ids on a ladder of
 * servers, each adding one layer to the rung it builds on, from the baseline
 * to the whole service, so the report shows what each layer costs per request.
 */
interface Context {
  dbs: BenchDatabases;
  template: string;
  idsFile: string;
  options: BenchOptions;
  logFile: string;
  log: (line: string) => void;
}

interface RungTarget {
  key: string;
  title: string;
  /**
   * The rung this one adds a layer to. Express is a side rung: the service
   * answers REST on node:http before express (src/http/rest/), so the
   * service's own path goes from the baseline to the service function.
   */
  base?: string;
  /** Starts the rung on `databaseUrl`; rung servers are ready once `readyPath` answers. */
  start(databaseUrl: string, logFile: string, readyPath: string): Promise<Target>;
}

const ladder: RungTarget[] = [
  {
    key: "baseline",
    title: "node:http + prepared statement (the baseline)",
    start: (url, logFile) => startBaseline(url, logFile),
  },
  {
    key: "express",
    title: "express 5 bare route + the same statement (beside the service's path)",
    base: "baseline",
    start: (url, logFile, ready) => startRung("express", url, logFile, ready),
  },
  {
    key: "service-function",
    title: "node:http + the service function (agentsService.get on src/db/)",
    base: "baseline",
    start: (url, logFile, ready) => startRung("service-function", url, logFile, ready),
  },
  {
    key: "procedure",
    title: "node:http + the tRPC procedure agents.get with its middlewares",
    base: "service-function",
    start: (url, logFile, ready) => startRung("procedure", url, logFile, ready),
  },
  {
    key: "service",
    title: "the whole service (dist/src/main.js, 1 worker)",
    base: "procedure",
    start: (url, logFile) => startService("service", { databaseUrl: url, logFile }),
  },
];

export interface RungRow {
  key: string;
  title: string;
  base?: string;
  summary: Summary;
}

async function answerOf(url: string): Promise<string> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${text}`);
  return text;
}

/** Rounds of every rung in order, each on a fresh copy of the seeded database. */
export async function rungBench(ctx: Context): Promise<RungRow[]> {
  const { options, log } = ctx;
  const [sampleId] = JSON.parse(readFileSync(ctx.idsFile, "utf8")) as string[];
  const path = `/agents/${sampleId}`;
  // The service's answer: every rung must give it byte for byte before it is measured.
  const referenceTarget = await startService("rung-reference", {
    databaseUrl: await ctx.dbs.copy(ctx.template, "rung_reference"),
    logFile: ctx.logFile,
  });
  const reference = await answerOf(`${referenceTarget.url}${path}`).finally(() => referenceTarget.stop());
  const runs = new Map<string, LoadResult[]>();
  for (let round = 1; round <= options.rounds; round++) {
    for (const rung of ladder) {
      const url = await ctx.dbs.copy(ctx.template, `rung_${rung.key}_${round}`);
      const target = await rung.start(url, ctx.logFile, path);
      try {
        const answer = await answerOf(`${target.url}${path}`);
        if (answer !== reference) {
          throw new Error(
            `rung "${rung.title}" answers GET ${path} with\n  ${answer}\nwhere the service answers\n  ${reference}`,
          );
        }
        const result = await measure(
          target,
          { kind: "get-one" },
          { connections: options.connections, duration: options.duration, idsFile: ctx.idsFile },
          options.warmup,
        );
        log(
          `${ctx.dbs.provider} round ${round} rung ${rung.key}: ${result.rps.toFixed(0)} req/s, errors ${result.errors}, CPU ${result.cpuPerRequest.toFixed(0)} µs/req`,
        );
        runs.set(rung.key, [...(runs.get(rung.key) ?? []), result]);
      } finally {
        await target.stop();
      }
    }
  }
  return ladder.map(({ key, title, base }) => ({ key, title, base, summary: summarise(runs.get(key) ?? []) }));
}

/**
 * The rungs' table for the report: each rung's increment over the rung it
 * builds on, and, for the rungs on the service's path, that increment's
 * share of the whole service's CPU per request (they add up to 100%).
 */
export function rungReport(rows: RungRow[] | undefined): string[] {
  const cpu = new Map(rows?.map((row) => [row.key, row.summary.cpuPerRequest]));
  const number = new Map(rows?.map((row, i) => [row.key, i + 1]));
  const whole = cpu.get("service");
  if (!rows || !whole) return [];
  const onPath = new Set<string | undefined>(["service"]);
  for (const row of [...rows].reverse()) if (onPath.has(row.key)) onPath.add(row.base);
  const lines = [
    "### Rungs: GET /agents/{id}, from node:http to the whole service",
    "",
    "Each rung adds one layer to the rung it builds on; server CPU per request is the figure to read (docs/performance.md, Rungs).",
    "",
    "| rung | req/s | server CPU µs/req | + µs over | share of the service's µs | p50 / p99 ms | errors |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const { key, title, base, summary } of rows) {
    const added = summary.cpuPerRequest - (base ? (cpu.get(base) ?? 0) : 0);
    const over = base ? `${added >= 0 ? "+" : ""}${added.toFixed(0)} over (${number.get(base)})` : "–";
    const share = onPath.has(key) ? `${((100 * added) / whole).toFixed(0)}%` : "–";
    lines.push(
      `| (${number.get(key)}) ${title} | ${summary.rps.toFixed(0)} | ${summary.cpuPerRequest.toFixed(0)} | ${over} | ${share} | ${summary.p50.toFixed(0)} / ${summary.p99.toFixed(0)} | ${summary.errors} |`,
    );
  }
  lines.push("");
  return lines;
}
