// Scenario (h)'s load, in its own process: `connections` workers, each in a
// loop, until the duration ends or no task is left. Mode "lease": create a
// lease, then finish its task through it (two requests per task). Mode
// "patch": one plain PATCH status change per task (pending → running), the
// cost (h) is compared with. Mode "sdk": the worker SDK (packages/sdk) with
// `connections` slots and a handler that does nothing: the loop of "lease",
// on node:http (the SDK's transport) instead of undici's request. Prints one
// JSON result line.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { createWorker } from "agent-management-sdk/worker";
import { Agent, request } from "undici";

interface RunnerInput {
  url: string;
  agentId: string;
  mode: "lease" | "patch" | "sdk";
  connections: number;
  duration: number;
  /** A JSON array of the agent's task ids (mode "patch"), used from `offset` on. */
  tasksFile: string;
  offset: number;
}

const input = JSON.parse(process.argv[2] ?? "{}") as RunnerInput;
const dispatcher = new Agent({ connections: input.connections, pipelining: 1 });
const json = { "content-type": "application/json" };
const taskIds = input.mode === "patch" ? (JSON.parse(readFileSync(input.tasksFile, "utf8")) as string[]) : [];
let next = input.offset;

async function call(method: "POST" | "PATCH", path: string, body: unknown) {
  const res = await request(`${input.url}${path}`, { method, headers: json, body: JSON.stringify(body), dispatcher });
  const text = await res.body.text();
  return { status: res.statusCode, text };
}

/** One task through: true when done, false when there was none left. */
async function cycle(): Promise<boolean> {
  const tasks = `/agents/${input.agentId}/tasks`;
  if (input.mode === "patch") {
    const id = taskIds[next++];
    if (id === undefined) return false;
    const patched = await call("PATCH", `${tasks}/${id}`, { status: "running" });
    if (patched.status !== 200) throw new Error(`PATCH answered ${patched.status}: ${patched.text}`);
    return true;
  }
  const leased = await call("POST", `/agents/${input.agentId}/leases`, {});
  if (leased.status === 204) return false;
  if (leased.status !== 201) throw new Error(`POST …/leases answered ${leased.status}: ${leased.text}`);
  const lease = JSON.parse(leased.text) as { id: string; task_id: string };
  const done = await call("PATCH", `${tasks}/${lease.task_id}`, { lease_id: lease.id, status: "succeeded" });
  if (done.status !== 200) throw new Error(`PATCH with lease_id answered ${done.status}: ${done.text}`);
  return true;
}

const started = performance.now();
const until = started + input.duration * 1000;
const latencies: number[] = [];
let errors = 0;
let last = started;

async function worker() {
  while (performance.now() < until) {
    const begun = performance.now();
    try {
      if (!(await cycle())) return;
      last = performance.now();
      latencies.push(last - begun);
    } catch (error) {
      errors++;
      if (errors === 1) process.stderr.write(`${String(error)}\n`);
    }
  }
}

/**
 * The SDK's worker until the duration ends. A task's latency runs from its
 * lease's answer to its report's (the long poll is the worker's own).
 */
async function sdkWorker() {
  const worker = createWorker({
    baseUrl: input.url,
    agentId: input.agentId,
    concurrency: input.connections,
    waitSeconds: 1,
    handler: () => null,
  });
  const leasedAt = new Map<string, number>();
  worker.on("lease", ({ task }) => leasedAt.set(task.id, performance.now()));
  worker.on("succeeded", ({ task }) => {
    last = performance.now();
    latencies.push(last - (leasedAt.get(task.id) ?? last));
    leasedAt.delete(task.id);
  });
  for (const event of ["lost", "failed", "error"] as const) {
    worker.on(event, (value) => {
      errors++;
      if (errors === 1) process.stderr.write(`${event}: ${value instanceof Error ? value.message : value.task.id}\n`);
    });
  }
  const running = worker.start();
  await sleep(Math.max(0, until - performance.now()));
  await worker.stop({ timeoutMs: 10_000 });
  await running;
}

if (input.mode === "sdk") await sdkWorker();
else await Promise.all(Array.from({ length: input.connections }, worker));
await dispatcher.close();
latencies.sort((a, b) => a - b);
const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
const seconds = (last - started) / 1000;
process.stdout.write(
  `${JSON.stringify({ tasks: latencies.length, seconds, rate: latencies.length / seconds, p50: at(0.5), p99: at(0.99), errors })}\n`,
);
