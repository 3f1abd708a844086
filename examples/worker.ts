// A worker for one agent, on the SDK (packages/sdk): it takes the agent's
// tasks with leases, renews each lease while its task runs, stops a task when
// asked to cancel it, and reports every outcome through the lease: succeeded,
// or failed and retried. SIGTERM or Ctrl-C lets running tasks finish, then stops.
// Run: API_URL=http://127.0.0.1:8000 AGENT_ID=… npx tsx examples/worker.ts
import { setTimeout as sleep } from "node:timers/promises";
import { createWorker } from "agent-management-sdk/worker";

type Input = { ms?: number; fail_first?: number } | null;

const worker = createWorker<Input, { done_at: string }>({
  baseUrl: process.env.API_URL ?? "http://127.0.0.1:8000",
  agentId: process.env.AGENT_ID ?? "",
  leaseSeconds: Number(process.env.LEASE_SECONDS ?? 30),
  // Tasks run at once, each slot holding one long poll while it waits.
  concurrency: Number(process.env.CONCURRENCY ?? 1),
  // The work itself: here, waiting `ms`; the first `fail_first` attempts fail.
  handler: async (task, { signal }) => {
    await sleep(task.input?.ms ?? 100, undefined, { signal });
    if (task.attempts < (task.input?.fail_first ?? 0)) throw new Error(`attempt ${task.attempts + 1} failed`);
    return { done_at: new Date().toISOString() };
  },
});

worker
  .on("lease", ({ task }) => console.log("leased", task.id, task.title))
  .on("succeeded", ({ task }) => console.log("succeeded", task.id))
  .on("failed", ({ task, retrying }) =>
    console.log("failed", task.id, retrying ? `retry at ${task.run_at}` : "for good"),
  )
  .on("cancelled", ({ task }) => console.log("cancelled", task.id))
  .on("lost", ({ task, reason }) => console.log("lost", task.id, reason))
  .on("error", (error) => console.error(error.message));
for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => worker.stop());
await worker.start();
console.log("stopped");
