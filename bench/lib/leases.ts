import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BenchOptions } from "./args.js";
import { adminQuery, type BenchDatabases } from "./databases.js";
import { pool } from "./seed.js";
import { root, startService, type Target } from "./targets.js";

/**
 * Scenario (h): lease-and-complete throughput. One running agent with
 * limits (max_running, max_running_per_key) and 10,000 ready tasks over 8
 * concurrency keys, so each claim takes the agent's lock, counts its running
 * tasks and picks fairly among the keys; `connections` workers each take a
 * lease and finish its task through it (POST …/leases, then PATCH
 * …/tasks/{id} with lease_id), until the time is up or no task is left.
 * Compared with the cost of one plain PATCH status change (pending →
 * running) on the same data; and the worker SDK (packages/sdk) running the
 * same loop with as many slots.
 */
export const readyTasks = 10_000;

export interface LeaseRun {
  tasks: number;
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  /** Server CPU time per task, µs. */
  cpuPerTask: number;
}

export interface LeaseBench {
  /** Mean over rounds: tasks leased and finished per second. */
  lease?: LeaseRun;
  /** Mean over rounds: plain PATCH status changes per second. */
  patch?: LeaseRun;
  /** Mean over rounds: tasks run by the worker SDK per second. */
  sdk?: LeaseRun;
}

interface Context {
  dbs: BenchDatabases;
  options: BenchOptions;
  logFile: string;
  log: (line: string) => void;
}

type Mode = "lease" | "patch" | "sdk";

function runner(
  url: string,
  agentId: string,
  mode: Mode,
  tasksFile: string,
  offset: number,
  connections: number,
  duration: number,
) {
  const input = JSON.stringify({ url, agentId, mode, tasksFile, offset, connections, duration });
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "bench/lib/lease-runner.ts"), input], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += chunk;
  });
  return new Promise<Omit<LeaseRun, "cpuPerTask">>((resolve, reject) =>
    child.once("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`lease runner exited ${code}`)),
    ),
  );
}

async function seed(url: string): Promise<{ agentId: string; taskIds: string[] }> {
  const post = async (path: string, body: unknown, method = "POST") => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 201 && res.status !== 200)
      throw new Error(`seeding (h): ${method} ${path} answered ${res.status}`);
    return (await res.json()) as { id: string };
  };
  // Limits that 32 workers never reach, so what is measured is the claim with its lock and its count, not a wait.
  const concurrency = { max_running: 64, max_running_per_key: 16 };
  const agent = await post("/agents", { name: "bench-worker", type: "worker", concurrency });
  await post(`/agents/${agent.id}`, { status: "running" }, "PATCH");
  const taskIds: string[] = new Array(readyTasks);
  await pool([...Array(readyTasks).keys()], 16, async (i) => {
    const task = { title: `task-${i}`, priority: i % 10, concurrency_key: `customer-${i % 8}` };
    taskIds[i] = (await post(`/agents/${agent.id}/tasks`, task)).id;
  });
  return { agentId: agent.id, taskIds };
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

function fold(runs: LeaseRun[]): LeaseRun | undefined {
  if (runs.length === 0) return undefined;
  return {
    tasks: runs.reduce((n, r) => n + r.tasks, 0),
    rate: mean(runs.map((r) => r.rate)),
    p50: mean(runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    cpuPerTask: mean(runs.map((r) => r.cpuPerTask)),
  };
}

/** A warm-up, then the measured run, on a fresh service over a fresh copy of the seeded database. */
async function measureMode(
  ctx: Context,
  template: string,
  seeded: { agentId: string; tasksFile: string },
  mode: Mode,
  round: number,
) {
  const { options } = ctx;
  const url = await ctx.dbs.copy(template, `leases_${mode}_${round}`);
  const target: Target = await startService(`leases-${mode}`, { databaseUrl: url, logFile: ctx.logFile });
  try {
    const warm = await runner(
      target.url,
      seeded.agentId,
      mode,
      seeded.tasksFile,
      0,
      options.connections,
      options.warmup,
    );
    const cpuBefore = target.cpuSeconds();
    const run = await runner(
      target.url,
      seeded.agentId,
      mode,
      seeded.tasksFile,
      warm.tasks,
      options.connections,
      options.duration,
    );
    const cpuPerTask = ((target.cpuSeconds() - cpuBefore) * 1e6) / Math.max(run.tasks, 1);
    ctx.log(
      `${ctx.dbs.provider} round ${round} (h) ${mode}: ${run.rate.toFixed(0)} tasks/s over ${run.tasks} tasks, p50 ${run.p50} ms, p99 ${run.p99} ms, errors ${run.errors}, CPU ${cpuPerTask.toFixed(0)} µs/task`,
    );
    return { ...run, cpuPerTask };
  } finally {
    await target.stop();
  }
}

export async function leaseBench(ctx: Context): Promise<LeaseBench> {
  const template = await ctx.dbs.fresh("leases_template");
  const seeder = await startService("seed-leases", { databaseUrl: template, logFile: ctx.logFile });
  ctx.log(`${ctx.dbs.provider}: (h) seeding one running agent with ${readyTasks} ready tasks`);
  const { agentId, taskIds } = await seed(seeder.url);
  await seeder.stop();
  if (ctx.dbs.provider === "postgresql") await adminQuery("ANALYZE tasks", template);
  const tasksFile = join(ctx.dbs.dir, "lease-tasks.json");
  writeFileSync(tasksFile, JSON.stringify(taskIds));
  const runs: Record<Mode, LeaseRun[]> = { lease: [], patch: [], sdk: [] };
  for (let round = 1; round <= ctx.options.rounds; round++) {
    for (const mode of ["patch", "lease", "sdk"] as const) {
      runs[mode].push(await measureMode(ctx, template, { agentId, tasksFile }, mode, round));
    }
  }
  return { lease: fold(runs.lease), patch: fold(runs.patch), sdk: fold(runs.sdk) };
}

/** The report's section for (h). */
export function leaseReport(bench: LeaseBench | undefined): string[] {
  const { lease, patch, sdk } = bench ?? {};
  if (!lease || !patch) return [];
  const ratio = patch.rate / lease.rate;
  const cpuRatio = lease.cpuPerTask / patch.cpuPerTask;
  const row = (name: string, run: LeaseRun) =>
    `| ${name} | ${run.rate.toFixed(0)} | ${run.p50.toFixed(0)} / ${run.p99.toFixed(0)} | ${run.cpuPerTask.toFixed(0)} | ${run.errors} |`;
  const share = (run: LeaseRun, of: LeaseRun) => `${((run.rate / of.rate) * 100).toFixed(0)}%`;
  return [
    `### (h) Lease and complete (${readyTasks.toLocaleString("en")} ready tasks over 8 keys, an agent with limits, 1 worker)`,
    "",
    "| run | tasks/s | p50 / p99 ms per task | server CPU µs/task | errors |",
    "|---|---|---|---|---|",
    `| lease + finish through it (2 requests) | ${lease.rate.toFixed(0)} | ${lease.p50.toFixed(0)} / ${lease.p99.toFixed(0)} | ${lease.cpuPerTask.toFixed(0)} | ${lease.errors} |`,
    `| plain PATCH status change (1 request) | ${patch.rate.toFixed(0)} | ${patch.p50.toFixed(0)} / ${patch.p99.toFixed(0)} | ${patch.cpuPerTask.toFixed(0)} | ${patch.errors} |`,
    ...(sdk ? [row("the worker SDK, a handler that does nothing (ms: lease to report)", sdk)] : []),
    "",
    `- one lease + completion costs ${ratio.toFixed(2)}× one PATCH in throughput, ${cpuRatio.toFixed(2)}× in server CPU; target ≤ 3×: ${ratio <= 3 ? "met" : "**missed**"}`,
    ...(sdk
      ? [
          `- the worker SDK runs ${share(sdk, lease)} of the hand-written loop's tasks per second; target ≥ 80%: ${sdk.rate >= 0.8 * lease.rate ? "met" : "**missed**"}`,
        ]
      : []),
    "",
  ];
}
