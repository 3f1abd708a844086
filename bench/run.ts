// `npm run bench [-- --quick | --duration 10 | --pg | --profile | --no-growth]`
// The service built for production against the node:http baseline on the same
// machine, in alternating rounds; see bench/README.md.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseOptions } from "./lib/args.js";
import { adminQuery, benchDatabases, type Provider } from "./lib/databases.js";
import { growthReport } from "./lib/growth.js";
import { leaseBench } from "./lib/leases.js";
import { whatLimits } from "./lib/limits.js";
import { listsBench, listsWanted } from "./lib/lists.js";
import { listQueryPlans } from "./lib/plans.js";
import { profileScenarios } from "./lib/profile-run.js";
import { checkTargets, machine, type ProviderReport, renderReport } from "./lib/report.js";
import { runRounds, scenariosFor } from "./lib/rounds.js";
import { rungBench } from "./lib/rungs/bench.js";
import { scheduleBench } from "./lib/schedules.js";
import { dataGroupPaths, markRunning, seedAgents } from "./lib/seed.js";
import { streamBench } from "./lib/streams.js";
import { root, startService } from "./lib/targets.js";
import { webhookBench } from "./lib/webhooks.js";

const options = parseOptions(process.argv.slice(2));
const log = (line: string) => process.stderr.write(`${line}\n`);

const profilesDir = join(root, "bench/results/profiles");

log("building the service (npm run build)");
execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });

async function benchProvider(provider: Provider): Promise<ProviderReport> {
  const dbs = benchDatabases(provider);
  try {
    const notes: string[] = [];
    // A report with the notes so far and no rounds, for the runs that stop early.
    const nothingMeasured = (): ProviderReport => ({
      provider,
      rows: [],
      notes,
      exitCodes: [],
      growth: [],
      plans: [],
      profiles: [],
      limits: [],
    });
    const logFile = join(dbs.dir, "server.log");
    // (h) has its own data: one agent with 10,000 ready tasks.
    const withLeases = options.scenarios.length === 0 || options.scenarios.includes("h");
    const leases = () => (withLeases && !options.profile ? leaseBench({ dbs, options, logFile, log }) : undefined);
    // (k) and (l) have their own million rows (bench/lib/lists.ts).
    if (listsWanted(options)) notes.push(...(await listsBench({ dbs, options, logFile, log })));
    if (options.scenarios.length > 0 && options.scenarios.every((key) => ["h", "k", "l"].includes(key))) {
      return { ...nothingMeasured(), leases: await leases() };
    }
    // One database seeded through the API; every run gets a fresh copy of it.
    const template = await dbs.fresh("template");
    const seeder = await startService("seed", { databaseUrl: template, seedSampleData: true, logFile });
    log(`${provider}: seeding ${options.agents} agents through POST /agents`);
    const ids = await seedAgents(seeder.url, options.agents);
    const running = ids.filter((_, i) => i % 10 === 0);
    const patched = await markRunning(seeder.url, running);
    notes.push(
      patched
        ? `${running.length} agents moved to running through PATCH /agents/{id}; (d) filters on status=running.`
        : "PATCH /agents/{id} is not served yet (405): every agent is idle, so (d) filters on status=idle.",
    );
    const groups = await dataGroupPaths(seeder.url);
    if (!groups.cars) notes.push("(g1) skipped: GET /v2/cars is not served yet.");
    if (!groups.coe) notes.push("(g2) skipped: GET /v1/coe is not served yet (or has no data).");
    await seeder.stop();
    // What autovacuum would do before long: without statistics PostgreSQL sorts (e) instead of walking the index.
    if (provider === "postgresql") await adminQuery("ANALYZE agents", template);
    const idsFile = join(dbs.dir, "ids.json");
    writeFileSync(idsFile, JSON.stringify(ids));

    const status = patched ? "running" : "idle";
    const context = { dbs, template, idsFile, status, groups, options, logFile, log };
    // (j) runs on the seeded data, beside the others or alone (--scenarios j).
    const withWebhooks = options.scenarios.length === 0 || options.scenarios.includes("j");
    const webhooks = () => (withWebhooks && !options.profile ? webhookBench(context) : undefined);
    // (m), the scheduler, likewise.
    const withSchedules = options.scenarios.length === 0 || options.scenarios.includes("m");
    const schedules = () => (withSchedules && !options.profile ? scheduleBench(context) : undefined);
    if (options.scenarios.length > 0 && options.scenarios.every((key) => ["j", "m"].includes(key))) {
      return { ...nothingMeasured(), webhooks: await webhooks(), schedules: await schedules() };
    }
    if (options.profile) {
      const profiles = await profileScenarios(context, profilesDir);
      return { ...nothingMeasured(), profiles };
    }
    // (i): the mix of (f) with 200 event streams open.
    if (options.scenarios.length === 0 || options.scenarios.includes("i")) notes.push(...(await streamBench(context)));
    // GET /agents/{id} from the baseline to the whole service, a layer at a time.
    const rungs =
      options.scenarios.length === 0 || options.scenarios.includes("rungs") ? await rungBench(context) : undefined;
    if (scenariosFor(status, groups, options.scenarios).length === 0) {
      // Nothing for the rounds (or the growth table) to measure.
      return {
        ...nothingMeasured(),
        rungs,
        leases: await leases(),
        webhooks: await webhooks(),
        schedules: await schedules(),
      };
    }
    const { rows, exitCodes } = await runRounds(context);
    const growth = options.growth ? await growthReport({ dbs, options, logFile, log }) : { rows: [], url: undefined };
    const plans = growth.url ? await listQueryPlans(provider, growth.url) : [];
    const limits = await whatLimits(context, checkTargets(provider, rows, growth.rows), rows, profilesDir);
    return {
      provider,
      rows,
      notes,
      exitCodes,
      growth: growth.rows,
      plans,
      profiles: [],
      limits,
      rungs,
      leases: await leases(),
      webhooks: await webhooks(),
      schedules: await schedules(),
    };
  } finally {
    await dbs.cleanup();
  }
}

const reports: ProviderReport[] = [];
for (const provider of [...(options.pgOnly ? [] : ["sqlite"]), ...(options.pg ? ["postgresql"] : [])] as Provider[]) {
  reports.push(await benchProvider(provider));
}

const header = [
  "# Benchmark results",
  "",
  `Run ${new Date().toISOString()} on ${machine()}.`,
  `${options.connections} connections, ${options.warmup} s warm-up then ${options.duration} s per scenario, ${options.rounds} alternating round(s) of service (1 worker), baseline, service (2 workers). Other work shares this machine: compare ratios, not absolute figures.`,
];
const markdown = renderReport(reports, header);
const resultsDir = join(root, "bench/results");
mkdirSync(resultsDir, { recursive: true });
// A profiling run has its own report, so it never replaces the latest figures.
const name = options.profile ? "profile" : "latest";
writeFileSync(join(resultsDir, `${name}.md`), markdown);
writeFileSync(join(resultsDir, `${name}.json`), JSON.stringify({ options, reports }, null, 2));
process.stdout.write(`${markdown}\n`);
log(`written to ${join(resultsDir, `${name}.md`)}`);
