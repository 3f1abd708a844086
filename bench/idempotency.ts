// `npm run bench:idempotency [-- --pg]`: the throughput cost of Idempotency-Key
// on (c) POST /agents. The built service, one worker, alternating rounds of
// POSTs without a key and with a new key each, on a fresh database each.
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { benchDatabases, type Provider } from "./lib/databases.js";
import { root, startService } from "./lib/targets.js";

const pg = process.argv.includes("--pg");
const duration = 5;
const rounds = 2;
const connections = 32;
const log = (line: string) => process.stderr.write(`${line}\n`);

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
  return new Promise<{ requests: number; rps: number; p99: number; non2xx: number }>((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`runner exited ${code}`)))),
  );
}

log("building the service (npm run build)");
execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
const lines = [
  "| database | without a key (req/s) | with a new key each (req/s) | cost | server CPU µs/req without / with |",
  "|---|---|---|---|---|",
];
for (const provider of ["sqlite", ...(pg ? ["postgresql"] : [])] as Provider[]) {
  const dbs = benchDatabases(provider);
  const totals = { plain: { rps: 0, cpu: 0 }, keyed: { rps: 0, cpu: 0 } };
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
          if (result.non2xx > 0) throw new Error(`${result.non2xx} answers were not 2xx`);
          log(
            `${provider} round ${round + 1} ${keyed ? "keyed" : "plain"}: ${result.rps.toFixed(0)} req/s, ${cpu.toFixed(0)} µs/req`,
          );
          const total = totals[keyed ? "keyed" : "plain"];
          total.rps += result.rps / rounds;
          total.cpu += cpu / rounds;
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
    `| ${provider} | ${totals.plain.rps.toFixed(0)} | ${totals.keyed.rps.toFixed(0)} | ${(cost * 100).toFixed(1)}% | ${totals.plain.cpu.toFixed(0)} / ${totals.keyed.cpu.toFixed(0)} |`,
  );
}
process.stdout.write(`${lines.join("\n")}\n`);
