// `npm run bench:rate-limit [-- --pg | --only postgresql | --duration 5 | --rounds 2 | --connections 32]`
// The throughput cost of RATE_LIMIT_PER_MINUTE on (a) GET /agents/{id} and
// (c) POST /agents: the built service with the limit off, then on (high
// enough that nothing is refused, so every request is counted and announced),
// in alternating rounds on fresh copies of one seeded database. Configurations:
// one SQLite process (counts in memory), WEB_CONCURRENCY=2 on SQLite (counts in
// the primary, over IPC), and with --pg one PostgreSQL instance (the
// rate_limits table).
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseCostOptions } from "./lib/args.js";
import { benchDatabases, type Provider } from "./lib/databases.js";
import { type LoadResult, measure } from "./lib/load.js";
import { agentScenarios } from "./lib/scenarios.js";
import { seedAgents } from "./lib/seed.js";
import { root, startService } from "./lib/targets.js";

const { providers, duration, rounds, connections } = parseCostOptions(process.argv.slice(2), { rounds: 1 });
const log = (line: string) => process.stderr.write(`${line}\n`);
// Nothing is refused at this rate from one client: what is measured is the counting itself.
const highLimit = "1000000";
const scenarios = agentScenarios("idle").filter((s) => s.key === "a" || s.key === "c");

log("building the service (npm run build)");
execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });

const configurations = (
  [
    { provider: "sqlite", workers: 1, label: "SQLite, 1 process (memory)" },
    { provider: "sqlite", workers: 2, label: "SQLite, WEB_CONCURRENCY=2 (the primary, over IPC)" },
    { provider: "postgresql", workers: 1, label: "PostgreSQL, 1 instance (rate_limits)" },
  ] as { provider: Provider; workers: number; label: string }[]
).filter(({ provider }) => providers.includes(provider));

const mean = (results: LoadResult[], pick: (r: LoadResult) => number) =>
  results.reduce((sum, r) => sum + pick(r), 0) / Math.max(results.length, 1);
const lines = [
  "| configuration | scenario | off req/s | on req/s | cost | off CPU µs/req | on CPU µs/req | errors (on) |",
  "|---|---|---|---|---|---|---|---|",
];

for (const { provider, workers, label } of configurations) {
  const dbs = benchDatabases(provider);
  try {
    const logFile = join(dbs.dir, "server.log");
    const template = await dbs.fresh("template");
    const seeder = await startService("seed", { databaseUrl: template, logFile });
    const ids = await seedAgents(seeder.url, 1000);
    await seeder.stop();
    const idsFile = join(dbs.dir, "ids.json");
    writeFileSync(idsFile, JSON.stringify(ids));
    const runs = new Map<string, LoadResult[]>();
    for (let round = 1; round <= rounds; round++) {
      for (const limit of ["0", highLimit]) {
        // startService passes the bench's environment on: this is how the setting reaches the service.
        process.env.RATE_LIMIT_PER_MINUTE = limit;
        const url = await dbs.copy(template, `run_${round}_${limit}`);
        const target = await startService("service", { databaseUrl: url, workers, logFile });
        for (const scenario of scenarios) {
          const result = await measure(target, scenario.workload, { connections, duration, idsFile }, 1);
          const variant = limit === "0" ? "off" : "on";
          log(
            `${label} ${variant} (${scenario.key}): ${result.rps.toFixed(0)} req/s, CPU ${result.cpuPerRequest.toFixed(0)} µs/req, errors ${result.errors}`,
          );
          runs.set(`${variant}:${scenario.key}`, [...(runs.get(`${variant}:${scenario.key}`) ?? []), result]);
        }
        await target.stop();
      }
    }
    for (const scenario of scenarios) {
      const off = runs.get(`off:${scenario.key}`) ?? [];
      const on = runs.get(`on:${scenario.key}`) ?? [];
      const [offRps, onRps] = [mean(off, (r) => r.rps), mean(on, (r) => r.rps)];
      const cost = ((offRps - onRps) / offRps) * 100;
      lines.push(
        `| ${label} | (${scenario.key}) ${scenario.title} | ${offRps.toFixed(0)} | ${onRps.toFixed(0)} | ${cost.toFixed(1)}% | ${mean(off, (r) => r.cpuPerRequest).toFixed(0)} | ${mean(on, (r) => r.cpuPerRequest).toFixed(0)} | ${mean(on, (r) => r.errors).toFixed(0)} |`,
      );
    }
  } finally {
    delete process.env.RATE_LIMIT_PER_MINUTE;
    await dbs.cleanup();
  }
}

process.stdout.write(
  `# Rate limiting cost\n\nRun ${new Date().toISOString()}: ${connections} connections, 1 s warm-up then ${duration} s per scenario, ${rounds} round(s) of off then on. Other work shares this machine: compare ratios.\n\n${lines.join("\n")}\n`,
);
