import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { migrateDatabase } from "../../src/db/migrations.js";
import type { BenchOptions } from "./args.js";
import type { BenchDatabases } from "./databases.js";
import { growAgents, sampleIds } from "./growth-data.js";
import { measure } from "./load.js";
import type { GrowthRow } from "./report.js";
import { starters } from "./rounds.js";
import { agentScenarios } from "./scenarios.js";
import { summarise } from "./stats.js";

export const growthSizes = [1_000, 10_000, 100_000, 1_000_000];

/** Latency of (a), (b) and (e) as the table grows, seeded straight into the database. */
export async function growthReport(ctx: {
  dbs: BenchDatabases;
  options: BenchOptions;
  logFile: string;
  log: (line: string) => void;
}) {
  const { dbs, options, log } = ctx;
  const url = await dbs.fresh("growth");
  await migrateDatabase(url);
  const scenarios = agentScenarios("running").filter((s) => ["a", "b", "e"].includes(s.key));
  const rows: GrowthRow[] = [];
  let size = 0;
  for (const next of growthSizes) {
    log(`${dbs.provider} growth: inserting agents ${size}..${next}`);
    await growAgents(dbs.provider, url, size, next);
    size = next;
    const idsFile = join(dbs.dir, `growth-ids-${size}.json`);
    writeFileSync(idsFile, JSON.stringify(await sampleIds(dbs.provider, url, 10_000)));
    const row: GrowthRow = { size, service: {}, baseline: {} };
    for (const name of ["service", "baseline"] as const) {
      const target = await starters[name](url, ctx.logFile);
      for (const scenario of scenarios) {
        const result = await measure(
          target,
          scenario.workload,
          { connections: options.connections, duration: options.growthDuration, idsFile },
          1,
        );
        log(
          `${dbs.provider} growth ${size} ${name} (${scenario.key}): ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}`,
        );
        row[name][scenario.key] = summarise([result]);
      }
      await target.stop();
    }
    rows.push(row);
  }
  return { rows, url };
}
