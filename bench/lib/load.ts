import { spawn } from "node:child_process";
import { join } from "node:path";
import type { Workload } from "./scenarios.js";
import { root, type Target } from "./targets.js";

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** Socket errors, timeouts and non-2xx responses. */
  errors: number;
  non2xx: number;
  /** Peak resident set of the server during the run, MiB. */
  rssMiB: number;
  /** Server CPU time (all its processes) per request, µs: the figure least moved by other work on the machine. */
  cpuPerRequest: number;
  /** Cores the server (all its processes) kept busy during the run, on average. */
  serverCores: number;
  /** Cores the load generator kept busy. */
  loadCores: number;
  /** The share of all the machine's cores busy during the run, whoever used them (0–1). */
  machineBusy: number;
}

export interface LoadOptions {
  connections: number;
  duration: number;
  /** A JSON file holding existing agent ids (too many for a command line). */
  idsFile: string;
  /** A project's API key, for the workloads that send one. */
  apiKey?: string;
}

function runner(url: string, workload: Workload, options: LoadOptions, duration: number) {
  const input = JSON.stringify({
    url,
    workload,
    connections: options.connections,
    duration,
    idsFile: options.idsFile,
    apiKey: options.apiKey,
  });
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "bench/lib/load-runner.ts"), input], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += chunk;
  });
  return new Promise<Omit<LoadResult, "rssMiB" | "cpuPerRequest" | "serverCores">>((resolve, reject) =>
    child.once("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load runner exited ${code}`)),
    ),
  );
}

/** A warm-up, then the measured run; the server's peak RSS and CPU are sampled during the measured part. */
export async function measure(
  target: Target,
  workload: Workload,
  options: LoadOptions,
  warmup: number,
  /** Called as the measured part starts. */
  onStart?: () => void,
) {
  if (warmup > 0) await runner(target.url, workload, options, warmup);
  target.resetPeak();
  onStart?.();
  const cpuBefore = target.cpuSeconds();
  const result = await runner(target.url, workload, options, options.duration);
  const serverSeconds = target.cpuSeconds() - cpuBefore;
  return {
    ...result,
    rssMiB: target.peakRss(),
    cpuPerRequest: (serverSeconds * 1e6) / Math.max(result.requests, 1),
    serverCores: serverSeconds / options.duration,
  };
}
