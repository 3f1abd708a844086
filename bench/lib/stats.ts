import type { LoadResult } from "./load.js";

/** Several runs of one scenario on one target (A B A B rounds) folded into one row. */
export interface Summary {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rssMiB: number;
  cpuPerRequest: number;
  serverCores: number;
  loadCores: number;
  machineBusy: number;
  runs: number;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** Mean throughput and median latency; the worst p99, error count summed, the largest RSS. */
export function summarise(runs: LoadResult[]): Summary {
  return {
    rps: mean(runs.map((r) => r.rps)),
    p50: mean(runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    rssMiB: Math.max(...runs.map((r) => r.rssMiB)),
    cpuPerRequest: mean(runs.map((r) => r.cpuPerRequest)),
    serverCores: mean(runs.map((r) => r.serverCores)),
    loadCores: mean(runs.map((r) => r.loadCores)),
    machineBusy: mean(runs.map((r) => r.machineBusy)),
    runs: runs.length,
  };
}
