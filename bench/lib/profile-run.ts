import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { measure } from "./load.js";
import { type ProfileSummary, summariseProfile } from "./profile.js";
import { type RunContext, scenariosFor } from "./rounds.js";
import type { Scenario } from "./scenarios.js";
import { startService } from "./targets.js";

/** One profile of the service under a scenario's load: the `.cpuprofile` file and how many requests it served. */
export interface ScenarioProfile {
  scenario: Scenario;
  file: string;
  requests: number;
}

/** Each scenario once more, on its own service process under `node --cpu-prof`; the profiles stay in `profilesDir`. */
export async function profileRuns(
  ctx: RunContext,
  profilesDir: string,
  scenarios: Scenario[],
): Promise<ScenarioProfile[]> {
  const profiles: ScenarioProfile[] = [];
  for (const scenario of scenarios) {
    const dir = join(profilesDir, `${ctx.dbs.provider}-${scenario.key}`);
    // An earlier run's profile left here could be the one read below.
    rmSync(dir, { recursive: true, force: true });
    const url = await ctx.dbs.copy(ctx.template, `profile_${scenario.key}`);
    const target = await startService("profiled", { databaseUrl: url, logFile: ctx.logFile, profileDir: dir });
    const result = await measure(
      target,
      scenario.workload,
      {
        connections: ctx.options.connections,
        duration: ctx.options.duration,
        idsFile: ctx.idsFile,
        apiKey: ctx.apiKey,
      },
      0,
    );
    await target.stop();
    const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
    if (!file) throw new Error(`no profile written in ${dir}`);
    profiles.push({ scenario, file: join(dir, file), requests: result.requests });
    ctx.log(`${ctx.dbs.provider} profiled (${scenario.key}) ${scenario.title}: ${result.rps.toFixed(0)} req/s`);
  }
  return profiles;
}

/** `--profile`: every chosen scenario profiled, each summarised as tables. */
export async function profileScenarios(ctx: RunContext, profilesDir: string): Promise<ProfileSummary[]> {
  const profiles = await profileRuns(ctx, profilesDir, scenariosFor(ctx.status, ctx.groups, ctx.options.scenarios));
  return profiles.map(({ scenario, file, requests }) =>
    summariseProfile(file, `(${scenario.key}) ${scenario.title}`, requests),
  );
}
