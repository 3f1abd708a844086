// `npm run bench:idempotency [-- --pg | --only postgresql | --duration 5 | --rounds 2 | --connections 32]`:
// the throughput cost of Idempotency-Key on (c) POST /agents. The built
// service, one worker, alternating rounds of POSTs without a key and with a
// new key each, on a fresh database each. Throughput counts the 2xx answers
// (the requests that created an agent); any other answer is reported by
// status, never hidden (503 is the admission control shedding load).
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { parseCostOptions } from "./lib/args.js";
import { benchDatabases } from "./lib/databases.js";
import { root, startService } from "./lib/targets.js";

const { providers, duration, rounds, connections } = parseCostOptions(process.argv.slice(2), { rounds: 2 });
const log = (line: string) => process.stderr.write(`${line}\n`);

interface RunnerResult {
  requests: number;
  createdPerSecond: number;
  p99: number;
  non2xx: number;
  statuses: Record<string, number>;
}

function load(url: string, keyed: boolean, seconds: number) {
  const input = JSON.stringify({ url, connections, duration: seconds, keyed });
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "bench/lib/idempotency-runner.ts"), input], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += chunk;
  });
  return new Promise<RunnerResult>((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`runner exited ${code}`)))),
  );
}

const statusText = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .map(([status, count]) => `${count}× ${status}`)
    .join(", ") || "none";

log("building the service (npm run build)");
execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
const lines = [
  "| database | without a key (2xx/s) | with a new key each (2xx/s) | cost | server CPU µs/req without / with | not 2xx without / with |",
  "|---|---|---|---|---|---|",
];
for (const provider of providers) {
  const dbs = benchDatabases(provider);
  const totals = {
    plain: { rps: 0, cpu: 0, statuses: {} as Record<string, number> },
    keyed: { rps: 0, cpu: 0, statuses: {} as Record<string, number> },
  };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const keyed of [false, true]) {
        const url = await dbs.fresh(`idempotency-${round}-${keyed}`);
        const service = await startService("service", { databaseUrl: url, logFile: join(dbs.dir, "server.log") });
        try {
          await load(service.url, keyed, 1);
          const cpuBefore = service.cpuSeconds();
          const result = await load(service.url, keyed, duration);
          const cpu = ((service.cpuSeconds() - cpuBefore) * 1e6) / Math.max(result.requests, 1);
          log(
            `${provider} round ${round + 1} ${keyed ? "keyed" : "plain"}: ${result.createdPerSecond.toFixed(0)} 2xx/s, ${cpu.toFixed(0)} µs/req, p99 ${result.p99} ms, not 2xx: ${statusText(result.statuses)}`,
          );
          const total = totals[keyed ? "keyed" : "plain"];
          total.rps += result.createdPerSecond / rounds;
          total.cpu += cpu / rounds;
          for (const [status, count] of Object.entries(result.statuses)) {
            total.statuses[status] = (total.statuses[status] ?? 0) + count;
          }
        } finally {
          await service.stop();
        }
      }
    }
  } finally {
    await dbs.cleanup();
  }
  const cost = 1 - totals.keyed.rps / totals.plain.rps;
  lines.push(
    `| ${provider} | ${totals.plain.rps.toFixed(0)} | ${totals.keyed.rps.toFixed(0)} | ${(cost * 100).toFixed(1)}% | ${totals.plain.cpu.toFixed(0)} / ${totals.keyed.cpu.toFixed(0)} | ${statusText(totals.plain.statuses)} / ${statusText(totals.keyed.statuses)} |`,
  );
}
process.stdout.write(
  `# Idempotency cost\n\nRun ${new Date().toISOString()}: ${connections} connections, 1 s warm-up then ${duration} s per run, ${rounds} round(s) of without then with a key.\n\n${lines.join("\n")}\n`,
);
