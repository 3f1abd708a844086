import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { openSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const root = new URL("../..", import.meta.url).pathname;

export interface Target {
  name: string;
  url: string;
  pid: number;
  /** Largest resident set (summed over the process and its workers) since the last reset, in MiB. */
  peakRss(): number;
  resetPeak(): void;
  /** CPU seconds (user + system) used so far by the process and its workers. */
  cpuSeconds(): number;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export interface ServiceOptions {
  databaseUrl: string;
  workers?: number;
  seedSampleData?: boolean;
  /** Directory for `node --cpu-prof` output; the service runs under the profiler when set. */
  profileDir?: string;
  logFile: string;
  /** More settings for this run (a scenario's own). */
  env?: Record<string, string>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || !address) throw new Error("no free port");
  return address.port;
}

/** Resident set of a process and every descendant (cluster workers), in KiB. */
function treeRss(pid: number): number {
  let total = 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      for (const child of children ? children.split(" ") : []) total += treeRss(Number(child));
    }
  } catch {
    // The process is gone (or going): it holds no memory.
  }
  return total;
}

const clockTicks = 100; // USER_HZ on Linux

/** User + system CPU ticks of a process and every descendant. */
function treeCpu(pid: number): number {
  let total = 0;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    total += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      for (const child of children ? children.split(" ") : []) total += treeCpu(Number(child));
    }
  } catch {
    // The process is gone.
  }
  return total;
}

async function waitReady(url: string, child: ChildProcess, logFile: string, readyPath: string) {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${url} exited with ${child.exitCode}; see ${logFile}`);
    try {
      const res = await fetch(`${url}${readyPath}`);
      if (res.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`${url} did not become ready; see ${logFile}`);
}

async function launch(
  name: string,
  args: string[],
  env: Record<string, string>,
  logFile: string,
  readyPath = "/agents?limit=1",
): Promise<Target> {
  const port = await freePort();
  const out = openSync(logFile, "a");
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", out, out],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, child, logFile, readyPath);
  const pid = child.pid as number;
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, treeRss(pid));
  }, 100);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    name,
    url,
    pid,
    peakRss: () => Math.round(Math.max(peak, treeRss(pid)) / 1024),
    resetPeak: () => {
      peak = treeRss(pid);
    },
    cpuSeconds: () => treeCpu(pid) / clockTicks,
    stop: async () => {
      clearInterval(sampler);
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** The service as it runs in production: built, NODE_ENV=production, asynchronous info logs. */
export function startService(name: string, options: ServiceOptions): Promise<Target> {
  const profile = options.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.profileDir}`] : [];
  return launch(
    name,
    [...profile, "dist/src/main.js"],
    {
      NODE_ENV: "production",
      JWT_SECRET: randomBytes(32).toString("hex"),
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString("hex"),
      DATABASE_URL: options.databaseUrl,
      WEB_CONCURRENCY: String(options.workers ?? 1),
      SEED_SAMPLE_DATA: String(options.seedSampleData ?? false),
      LOG_LEVEL: "info",
      ...options.env,
    },
    options.logFile,
  );
}

/** The node:http + better-sqlite3 (or pg) baseline. */
export function startBaseline(databaseUrl: string, logFile: string): Promise<Target> {
  return launch(
    "baseline",
    ["--import", "tsx", join(root, "bench/baseline/server.ts")],
    { NODE_ENV: "production", DATABASE_URL: databaseUrl },
    logFile,
  );
}

/**
 * A rung server of bench/lib/rungs/ (`express`, `service-function`,
 * `procedure`): ready once `readyPath` (one agent) answers 200.
 */
export function startRung(rung: string, databaseUrl: string, logFile: string, readyPath: string): Promise<Target> {
  return launch(
    rung,
    ["--import", "tsx", join(root, `bench/lib/rungs/${rung}.ts`)],
    {
      NODE_ENV: "production",
      JWT_SECRET: randomBytes(32).toString("hex"),
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString("hex"),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "info",
    },
    logFile,
    readyPath,
  );
}
