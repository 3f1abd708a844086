import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { connectDatabase, statement } from "../../src/db/index.js";
import { adminQuery } from "./databases.js";
import { type LoadResult, measure } from "./load.js";
import type { RunContext } from "./rounds.js";
import { startService } from "./targets.js";

/**
 * Scenario (m): the scheduler (docs/api/schedules.md).
 * - Firing: `firing` schedules whose run times are spread evenly over
 *   `windowSeconds`, written straight into the database before the service
 *   starts; then the lag from each run time to its task's creation, as the
 *   tasks hold them (scheduled_for, created_at). Target: p99 ≤ 2 s.
 * - Idle: `idle` schedules whose next run is months away, and (a) and (c)
 *   measured with them and without them, in alternating rounds. Target:
 *   each keeps ≥ 95% of its throughput.
 * `--quick` runs a tenth of each (1,000 schedules over 10 s, 10,000 idle).
 */
export interface ScheduleBench {
  firing: number;
  windowSeconds: number;
  created: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  idle: number;
  a: { without: LoadResult[]; with: LoadResult[] };
  c: { without: LoadResult[]; with: LoadResult[] };
}

const insertSchedule = statement<
  unknown,
  [id: string, agentId: string, startAt: Date, everySeconds: number, task: string, now: Date]
>(
  "bench_insert_schedule",
  `INSERT INTO schedules (id, project_id, agent_id, cron, every_seconds, timezone, task, overlap, catch_up, paused,
     start_at, end_at, next_run_at, last_run_at, last_task_id, created_at, updated_at, version)
   VALUES ($1, '00000000-0000-4000-8000-000000000000', $2, NULL, $4, 'UTC', $5, 'allow', 'latest', FALSE,
     $3, NULL, $3, NULL, NULL, $6, $6, 1)`,
);
const runLags = statement<{ scheduled_for: string; created_at: string }>(
  "bench_schedule_lags",
  "SELECT scheduled_for, created_at FROM tasks WHERE scheduled_for IS NOT NULL",
);

const template = JSON.stringify({
  title: "scheduled",
  description: null,
  priority: 5,
  input: null,
  max_attempts: 1,
  metadata: {},
  concurrency_key: null,
  deadline_seconds: null,
});

/** Writes `count` schedules of `agentIds` (round robin), the i-th first due at `firstAt(i)`. */
async function writeSchedules(
  url: string,
  agentIds: string[],
  count: number,
  everySeconds: number,
  firstAt: (i: number) => Date,
) {
  const db = await connectDatabase(url);
  try {
    const now = new Date();
    for (let from = 0; from < count; from += 1_000) {
      await db.transaction(async (tx) => {
        for (let i = from; i < Math.min(from + 1_000, count); i++) {
          const agentId = agentIds[i % agentIds.length] as string;
          await tx.run(insertSchedule, [randomUUID(), agentId, firstAt(i), everySeconds, template, now]);
        }
      });
    }
  } finally {
    await db.close();
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);

export async function scheduleBench(ctx: RunContext): Promise<ScheduleBench> {
  const { log, options } = ctx;
  const { quick } = options;
  const firing = quick ? 1_000 : 10_000;
  const windowSeconds = quick ? 10 : 60;
  const idle = quick ? 10_000 : 100_000;
  const agentIds = (JSON.parse(readFileSync(ctx.idsFile, "utf8")) as string[]).slice(0, 100);

  // Firing: the run times begin once the service has had time to start.
  const firingUrl = await ctx.dbs.copy(ctx.template, "schedules_firing");
  const firstRun = Date.now() + 15_000 + firing;
  const spacing = (windowSeconds * 1000) / firing;
  await writeSchedules(firingUrl, agentIds, firing, 3_600, (i) => new Date(firstRun + Math.floor(i * spacing)));
  const target = await startService("schedules-firing", { databaseUrl: firingUrl, logFile: ctx.logFile });
  let lags: number[];
  try {
    log(`${ctx.dbs.provider}: (m) ${firing} schedules firing over ${windowSeconds} s`);
    const waitMs = firstRun + windowSeconds * 1000 + 5_000 - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(waitMs, 0)));
    const db = await connectDatabase(firingUrl);
    try {
      lags = (await db.all(runLags, [])).map((row) => Date.parse(row.created_at) - Date.parse(row.scheduled_for));
    } finally {
      await db.close();
    }
  } finally {
    await target.stop();
  }
  lags.sort((x, y) => x - y);

  // Idle: (a) and (c) with and without them, alternating.
  // The idle schedules are written into a copy that is then copied again, as the database without them is: so
  // neither side is measured while its database still digests a seed (SQLite's WAL, PostgreSQL's autovacuum).
  const withoutUrl = await ctx.dbs.copy(ctx.template, "schedules_idle_without");
  const seededUrl = await ctx.dbs.copy(ctx.template, "schedules_idle_seeded");
  const months = Date.now() + 200 * 86_400_000;
  await writeSchedules(seededUrl, agentIds, idle, 31_536_000, (i) => new Date(months + i * 1000));
  if (ctx.dbs.provider === "postgresql") await adminQuery("VACUUM ANALYZE schedules", seededUrl);
  const withUrl = await ctx.dbs.copy(seededUrl, "schedules_idle_with");
  const result: ScheduleBench = {
    firing,
    windowSeconds,
    created: lags.length,
    lagP50Ms: percentile(lags, 50),
    lagP99Ms: percentile(lags, 99),
    lagMaxMs: lags.at(-1) ?? Number.NaN,
    idle,
    a: { without: [], with: [] },
    c: { without: [], with: [] },
  };
  const load = { connections: options.connections, duration: options.duration, idsFile: ctx.idsFile };
  const sides = [
    ["without", withoutUrl],
    ["with", withUrl],
  ] as const;
  for (let round = 1; round <= options.rounds; round++) {
    // Each side goes first every other round, so neither always meets a cold machine.
    for (const [side, url] of round % 2 === 1 ? sides : [...sides].reverse()) {
      const service = await startService(`schedules-idle-${side}`, { databaseUrl: url, logFile: ctx.logFile });
      try {
        result.a[side].push(await measure(service, { kind: "get-one" }, load, options.warmup));
        result.c[side].push(await measure(service, { kind: "create" }, load, options.warmup));
      } finally {
        await service.stop();
      }
    }
  }
  log(
    `${ctx.dbs.provider} (m): ${result.created}/${firing} tasks, lag p50 ${result.lagP50Ms} ms, p99 ${result.lagP99Ms} ms, max ${result.lagMaxMs} ms; ${idle} idle schedules: (a) ${ratio(result.a).toFixed(3)}×, (c) ${ratio(result.c).toFixed(3)}×`,
  );
  return result;
}

const mean = (runs: LoadResult[]) => runs.reduce((sum, run) => sum + run.rps, 0) / Math.max(runs.length, 1);
const ratio = (pair: { without: LoadResult[]; with: LoadResult[] }) => mean(pair.with) / mean(pair.without);

/** The report's section for (m). */
export function scheduleReport(bench: ScheduleBench | undefined): string[] {
  if (!bench) return [];
  const lagMet = bench.created === bench.firing && bench.lagP99Ms <= 2_000;
  const [a, c] = [ratio(bench.a), ratio(bench.c)];
  return [
    `### (m) Schedules (${bench.firing.toLocaleString("en")} firing over ${bench.windowSeconds} s; ${bench.idle.toLocaleString("en")} idle)`,
    "",
    "| run | value |",
    "|---|---|",
    `| tasks created for the run times | ${bench.created} of ${bench.firing} |`,
    `| lag from run time to task, p50 / p99 / max | ${bench.lagP50Ms} / ${bench.lagP99Ms} / ${bench.lagMaxMs} ms |`,
    `| (a) req/s with / without idle schedules | ${mean(bench.a.with).toFixed(0)} / ${mean(bench.a.without).toFixed(0)} |`,
    `| (c) req/s with / without idle schedules | ${mean(bench.c.with).toFixed(0)} / ${mean(bench.c.without).toFixed(0)} |`,
    "",
    `- every run time's task, p99 lag ≤ 2 s: ${lagMet ? "met" : "**missed**"}`,
    `- idle schedules cost (a) ${((1 - a) * 100).toFixed(1)}%, (c) ${((1 - c) * 100).toFixed(1)}%; target ≤ 5%: ${a >= 0.95 && c >= 0.95 ? "met" : "**missed**"}`,
    "",
  ];
}
