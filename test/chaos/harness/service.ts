import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const projectRoot = new URL("../../..", import.meta.url).pathname;

/** Where the services' logs go; kept after the run so a failure can be read. */
export const logDir = process.env.CHAOS_LOG_DIR ?? join(tmpdir(), "chaos-logs");

export interface ServiceOptions {
  databaseUrl: string;
  /** Names the log file. */
  label: string;
  /** Settings beyond the production defaults below (WEB_CONCURRENCY, limits, …). */
  env?: Record<string, string>;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Service {
  url: string;
  port: number;
  pid: number;
  logFile: string;
  /** Everything the service has written to stdout and stderr so far. */
  log(): string;
  alive(): boolean;
  exited: Promise<Exit>;
  /** Sends a signal to the main process only, as a supervisor would. */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL to the whole process group (workers too); resolves once the main process is gone. */
  kill(): Promise<Exit>;
  /** SIGTERM, then the exit; SIGKILL when it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<Exit>;
  /** Resident set of the process and its workers, in MiB. */
  rssMiB(): number;
}

const running = new Set<ChildProcess>();

/** Kills every service this process started that still runs; safe to call at any time. */
export function killAllServices() {
  for (const child of running) killGroup(child);
}

function killGroup(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

// A test that throws, or a runner that exits, still leaves no service behind.
process.once("exit", killAllServices);

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || !address) throw new Error("no free port");
  return address.port;
}

/** Resident set of a process and every descendant (cluster workers), in KiB. */
export function treeRssKiB(pid: number): number {
  let total = 0;
  try {
    total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      for (const child of children ? children.split(" ") : []) total += treeRssKiB(Number(child));
    }
  } catch {
    // The process is gone: it holds no memory.
  }
  return total;
}

/**
 * The built service (`npm run build` ran first) as production runs it:
 * `node dist/src/main.js`, NODE_ENV=production, its own process group so
 * that killing it kills its workers too. Resolves once it answers.
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  mkdirSync(logDir, { recursive: true });
  const port = await freePort();
  const logFile = join(logDir, `${options.label}-${Date.now()}-${randomBytes(2).toString("hex")}.log`);
  const out = openSync(logFile, "a");
  const workers = Number(options.env?.WEB_CONCURRENCY ?? 1);
  const child = spawn(process.execPath, ["dist/src/main.js"], {
    cwd: projectRoot,
    detached: true,
    stdio: ["ignore", out, out],
    env: {
      ...process.env,
      NODE_ENV: "production",
      JWT_SECRET: randomBytes(32).toString("hex"),
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString("hex"),
      LOG_LEVEL: "info",
      SEED_SAMPLE_DATA: "false",
      ...options.env,
      DATABASE_URL: options.databaseUrl,
      HOST: "127.0.0.1",
      PORT: String(port),
    },
  });
  closeSync(out); // the child has its own copy
  running.add(child);
  const exited = new Promise<Exit>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const log = () => readFileSync(logFile, "utf8");
  const alive = () => child.exitCode === null && child.signalCode === null;
  const service: Service = {
    url,
    port,
    pid: child.pid as number,
    logFile,
    log,
    alive,
    exited,
    signal: (signal) => {
      if (alive()) child.kill(signal);
    },
    kill: () => {
      killGroup(child);
      return exited;
    },
    stop: async (graceMs = 30_000) => {
      if (alive()) child.kill("SIGTERM");
      const timer = setTimeout(() => killGroup(child), graceMs);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
    rssMiB: () => Math.round(treeRssKiB(child.pid as number) / 1024),
  };
  try {
    await waitUntilServing(service, workers);
  } catch (error) {
    await service.kill();
    throw error;
  }
  return service;
}

async function waitUntilServing(service: Service, workers: number) {
  const deadline = Date.now() + 90_000; // a first start on PostgreSQL migrates through Prisma's CLI
  let firstAnswer: number | undefined;
  while (Date.now() < deadline) {
    if (!service.alive()) throw new Error(`the service exited before serving; see ${service.logFile}`);
    try {
      const response = await fetch(`${service.url}/agents?limit=1`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) firstAnswer ??= Date.now();
    } catch {
      // Not answering yet.
    }
    // With workers, one answering is not all serving: wait for each one's "listening" line
    // (or, should that line ever read differently, a few seconds after the first answer).
    const listening = service.log().match(/"msg":"listening/g)?.length ?? 0;
    if (firstAnswer !== undefined && (listening >= workers || Date.now() - firstAnswer > 5000)) return;
    await sleep(50);
  }
  throw new Error(`the service did not serve within 90 s; see ${service.logFile}`);
}

/** Whether the service still answers (a crash takes a moment to show as an exit). */
export async function stillServing(service: Service): Promise<boolean> {
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    if (!service.alive()) return false;
    try {
      const response = await fetch(`${service.url}/agents?limit=1`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return true;
    } catch {
      // Not answering (yet): ask again until the deadline.
    }
    await sleep(100);
  }
  return false;
}
