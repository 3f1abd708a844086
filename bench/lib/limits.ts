// For each target of the rounds that a run misses, what limits it, in the
// run's own figures: the service's profile under that scenario for a ratio or
// a p99, the machine's CPU for two workers.
import { cpus } from "node:os";
import { profileLine, profileShares } from "./profile.js";
import { profileRuns } from "./profile-run.js";
import type { ScenarioRow, TargetCheck } from "./report.js";
import { type RunContext, scenariosFor } from "./rounds.js";
import type { Summary } from "./stats.js";

const percent = (share: number) => `${(100 * share).toFixed(0)}%`;
const cores = (n: number) => n.toFixed(2);

/** The machine's CPU during the 2-worker runs of a scenario, against the 1-worker runs. */
export function workersLine(check: TargetCheck, row: ScenarioRow, total = cpus().length): string {
  const [one, two] = [row.service, row.service2];
  if (!one || !two) return `- ${check.target}: not measured`;
  // What neither the service nor the load generator used: the database server (PostgreSQL) and anything else.
  const rest = (figures: Summary) =>
    cores(Math.max(figures.machineBusy * total - figures.serverCores - figures.loadCores, 0));
  const who = (figures: Summary) =>
    `service ${cores(figures.serverCores)} cores, load generator ${cores(figures.loadCores)}, the rest ${rest(figures)}`;
  const saturated = two.machineBusy >= 0.9 ? ": the machine's CPU was the limit" : "";
  return `- ${check.target}: the ${total} cores were ${percent(two.machineBusy)} busy during the 2-worker runs${saturated} (${who(two)}); with 1 worker ${percent(one.machineBusy)} (${who(one)})`;
}

export async function whatLimits(
  ctx: RunContext,
  checks: TargetCheck[],
  rows: ScenarioRow[],
  profilesDir: string,
): Promise<string[]> {
  const missed = checks.filter((check) => !check.met && check.scenario !== undefined);
  const row = (key: string) => rows.find((r) => r.key === key) as ScenarioRow;
  // One profile per scenario whose ratio or p99 is missed.
  const toProfile = new Set(missed.filter((c) => c.kind === "ratio" || c.kind === "p99").map((c) => c.scenario));
  const scenarios = scenariosFor(ctx.status, ctx.groups).filter((s) => toProfile.has(s.key));
  const profiles = new Map(
    (await profileRuns(ctx, profilesDir, scenarios)).map((p) => [
      p.scenario.key,
      { ...p, shares: profileShares(p.file) },
    ]),
  );
  return missed.map((check) => {
    const r = row(check.scenario as string);
    if (check.kind === "workers") return workersLine(check, r);
    const profile = profiles.get(check.scenario as string);
    if (!profile || !r.service) return `- ${check.target}: not profiled`;
    const gc = profile.shares.groups.find(([group]) => group === "(garbage collector)")?.[1] ?? 0;
    const measured =
      check.kind === "p99"
        ? `p50 ${r.service.p50.toFixed(0)} ms, p99 ${r.service.p99} ms (worst round) at ${ctx.options.connections} connections; garbage collection ${percent(gc / profile.shares.busyMs)} of the busy time`
        : `server CPU ${r.service.cpuPerRequest.toFixed(0)} µs per request against the baseline's ${r.baseline?.cpuPerRequest.toFixed(0) ?? "–"}`;
    // The profiled process's start is in its profile too: a small share against a scenario's seconds of load.
    return `- ${check.target}: ${measured}; the service's profile under it (its start included), ${profileLine(profile.shares)}`;
  });
}
