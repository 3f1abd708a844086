import type { BenchOptions } from "./args.js";
import type { BenchDatabases } from "./databases.js";
import { type LoadResult, measure } from "./load.js";
import type { ScenarioRow } from "./report.js";
import { agentScenarios, type Scenario } from "./scenarios.js";
import type { DataGroupPaths } from "./seed.js";
import { summarise } from "./stats.js";
import { startBaseline, startService, type Target } from "./targets.js";

export interface RunContext {
  dbs: BenchDatabases;
  /** The database seeded through the API; each run starts on a copy. */
  template: string;
  idsFile: string;
  /** An API key of the default project made in the template (agents:read, agents:write), for (a-key) and (c-key). */
  apiKey?: string;
  status: string;
  groups: DataGroupPaths;
  options: BenchOptions;
  logFile: string;
  log: (line: string) => void;
}

export type TargetName = "service" | "baseline" | "service2";

export const starters: Record<TargetName, (url: string, logFile: string) => Promise<Target>> = {
  service: (databaseUrl, logFile) => startService("service", { databaseUrl, logFile }),
  baseline: (databaseUrl, logFile) => startBaseline(databaseUrl, logFile),
  service2: (databaseUrl, logFile) => startService("service2", { databaseUrl, workers: 2, logFile }),
};

export function scenariosFor(status: string, groups: DataGroupPaths, only: string[] = []): Scenario[] {
  const scenarios = agentScenarios(status);
  // The data groups are read-only and served by the service alone.
  const at = scenarios.findIndex((s) => !s.read);
  const extra: Scenario[] = [];
  if (groups.cars)
    extra.push({
      key: "g1",
      title: "GET /v2/cars?page=N",
      workload: { kind: "paths", paths: groups.cars },
      baseline: false,
      read: true,
    });
  if (groups.coe)
    extra.push({
      key: "g2",
      title: "GET /v1/coe?month=…",
      workload: { kind: "paths", paths: groups.coe },
      baseline: false,
      read: true,
    });
  scenarios.splice(at, 0, ...extra);
  return only.length ? scenarios.filter((s) => only.includes(s.key) || only.includes(s.key[0] as string)) : scenarios;
}

/** Rounds of service (1 worker), baseline, service (2 workers), each on a fresh copy of the seeded database. */
export async function runRounds(ctx: RunContext) {
  const { options, log } = ctx;
  const scenarios = scenariosFor(ctx.status, ctx.groups, options.scenarios);
  const runs = new Map<string, LoadResult[]>();
  const exitCodes: string[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    for (const name of Object.keys(starters) as TargetName[]) {
      const url = await ctx.dbs.copy(ctx.template, `${name}_${round}`);
      const target = await starters[name](url, ctx.logFile);
      for (const scenario of scenarios) {
        if (name === "baseline" && !scenario.baseline) continue;
        const result = await measure(
          target,
          scenario.workload,
          { connections: options.connections, duration: options.duration, idsFile: ctx.idsFile, apiKey: ctx.apiKey },
          options.warmup,
        );
        log(
          `${ctx.dbs.provider} round ${round} ${name.padEnd(8)} (${scenario.key}) ${scenario.title}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}, RSS ${result.rssMiB} MiB, CPU ${result.cpuPerRequest.toFixed(0)} µs/req`,
        );
        runs.set(`${name}:${scenario.key}`, [...(runs.get(`${name}:${scenario.key}`) ?? []), result]);
      }
      exitCodes.push(`${name} ${await target.stop()}`);
    }
  }
  const of = (name: TargetName, key: string) => {
    const list = runs.get(`${name}:${key}`);
    return list ? summarise(list) : undefined;
  };
  const rows: ScenarioRow[] = scenarios.map((s) => ({
    key: s.key,
    title: s.title,
    read: s.read,
    service: of("service", s.key),
    baseline: of("baseline", s.key),
    service2: of("service2", s.key),
  }));
  return { rows, exitCodes: [...new Set(exitCodes)] };
}
