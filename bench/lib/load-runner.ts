// Runs autocannon in its own process (so the load generator's CPU is never the
// bench's event loop) and prints one JSON result line.
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import autocannon from "autocannon";
import type { Workload } from "./scenarios.js";

interface RunnerInput {
  url: string;
  connections: number;
  duration: number;
  workload: Workload;
  /** A JSON array of existing agent ids. */
  idsFile: string;
  /** The project's API key a workload with `apiKey` sends. */
  apiKey?: string;
}

const input = JSON.parse(process.argv[2] ?? "{}") as RunnerInput;
const { workload } = input;
const ids = JSON.parse(readFileSync(input.idsFile, "utf8")) as string[];
const pick = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)] as T;
const types = ["assistant", "worker", "supervisor"];
const keyed = "apiKey" in workload && workload.apiKey && input.apiKey ? { "x-api-key": input.apiKey } : undefined;
const json = { "content-type": "application/json", ...keyed };
let counter = 0;
const createBody = () => JSON.stringify({ name: `bench-${process.pid}-${counter++}`, type: pick(types) });

type Request = { method: "GET" | "POST" | "PUT"; path: string; headers?: Record<string, string>; body?: string };

function nextRequest(): Request {
  switch (workload.kind) {
    case "get-one":
      return keyed
        ? { method: "GET", path: `/agents/${pick(ids)}`, headers: keyed }
        : { method: "GET", path: `/agents/${pick(ids)}` };
    case "path":
      return { method: "GET", path: workload.path };
    case "paths":
      return { method: "GET", path: pick(workload.paths) };
    case "create":
      return { method: "POST", path: "/agents", headers: json, body: createBody() };
    case "mix": {
      // 80% reads (single agents and a page), 10% creates, 10% replacements.
      const roll = Math.random();
      if (roll < 0.7) return { method: "GET", path: `/agents/${pick(ids)}` };
      if (roll < 0.8) return { method: "GET", path: "/agents?limit=10" };
      if (roll < 0.9) return { method: "POST", path: "/agents", headers: json, body: createBody() };
      const body = JSON.stringify({ name: `renamed-${counter++}`, type: pick(types) });
      return { method: "PUT", path: `/agents/${pick(ids)}`, headers: json, body };
    }
  }
}

/** Busy and total CPU milliseconds of all the machine's cores since boot. */
function machineTimes() {
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    const all = times.user + times.nice + times.sys + times.idle + times.irq;
    total += all;
    busy += all - times.idle;
  }
  return { busy, total };
}

const machineBefore = machineTimes();
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: input.url,
  connections: input.connections,
  duration: input.duration,
  requests: [{ setupRequest: (request) => ({ ...request, ...nextRequest() }) }],
});
// This process's CPU over the run: what the load generator takes from the machine.
const cpu = process.cpuUsage(cpuBefore);
const machineAfter = machineTimes();

process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    non2xx: result.non2xx,
    loadCores: (cpu.user + cpu.system) / 1e6 / input.duration,
    machineBusy: (machineAfter.busy - machineBefore.busy) / Math.max(machineAfter.total - machineBefore.total, 1),
  })}\n`,
);
