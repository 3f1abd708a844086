import { readdirSync } from "node:fs";
import { join } from "node:path";
import { measure } from "./load.js";
import { type ProfileSummary, summariseProfile } from "./profile.js";
import { type RunContext, scenariosFor } from "./rounds.js";
import { startService } from "./targets.js";

/** Each scenario once more, on its own service process under `node --cpu-prof`; the profiles stay in bench/results/profiles. */
export async function profileScenarios(ctx: RunContext, profilesDir: string): Promise<ProfileSummary[]> {
  const summaries: ProfileSummary[] = [];
  for (const scenario of scenariosFor(ctx.status, ctx.groups, ctx.options.scenarios)) {
    const dir = join(profilesDir, `${ctx.dbs.provider}-${scenario.key}`);
    const url = await ctx.dbs.copy(ctx.template, `profile_${scenario.key}`);
    const target = await startService("profiled", { databaseUrl: url, logFile: ctx.logFile, profileDir: dir });
    const result = await measure(
      target,
      scenario.workload,
      { connections: ctx.options.connections, duration: ctx.options.duration, idsFile: ctx.idsFile },
      0,
    );
    await target.stop();
    const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
    if (!file) throw new Error(`no profile written in ${dir}`);
    summaries.push(summariseProfile(join(dir, file), `(${scenario.key}) ${scenario.title}`, result.requests));
    ctx.log(`${ctx.dbs.provider} profiled (${scenario.key}) ${scenario.title}: ${result.rps.toFixed(0)} req/s`);
  }
  return summaries;
}
