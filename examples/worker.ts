// A worker for one agent: take its next task with a lease (waiting for one),
// renew the lease while working, stop when asked to cancel, and finish through
// the lease: succeeded, or failed and retried. Stops once no task comes.
// Run: API_URL=http://127.0.0.1:8000 AGENT_ID=… npx tsx examples/worker.ts
import { setTimeout as sleep } from "node:timers/promises";
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import type { AppRouter } from "../src/modules/index.js";

// httpLink, not httpBatchLink: a long poll must not hold other calls back.
const api = createTRPCClient<AppRouter>({
  links: [httpLink({ url: `${process.env.API_URL ?? "http://127.0.0.1:8000"}/trpc` })],
});
const agent_id = process.env.AGENT_ID ?? "";
const leaseSeconds = Number(process.env.LEASE_SECONDS ?? 30);

type Input = { ms?: number; fail_first?: number } | null;

/** The work itself: here, waiting `ms`; the first `fail_first` attempts fail. */
async function work(input: Input, attempts: number, signal: AbortSignal) {
  await sleep(input?.ms ?? 100, undefined, { signal });
  if (attempts < (input?.fail_first ?? 0)) throw new Error(`attempt ${attempts + 1} failed`);
  return { done_at: new Date().toISOString() };
}

for (;;) {
  const lease = await api.leases.create.mutate({
    agent_id,
    worker: `example-${process.pid}`,
    duration_seconds: leaseSeconds,
    wait_seconds: Number(process.env.WAIT_SECONDS ?? 20),
  });
  if (!lease) break; // nothing came within wait_seconds
  const { task } = lease;
  console.log("leased", task.id, task.title);

  // Renew at a third of the lease; stop working when cancellation is asked or the lease is gone.
  const stop = new AbortController();
  let outcome: "cancel" | "lost" | undefined;
  const renew = async () => {
    try {
      const renewed = await api.leases.renew.mutate({ agent_id, lease_id: lease.id });
      if (renewed.task.cancel_requested) outcome = "cancel";
    } catch (error) {
      if (!(error instanceof TRPCClientError) || error.data?.httpStatus !== 404) return; // try again next time
      outcome = "lost";
    }
    if (outcome) stop.abort();
  };
  const renewing = setInterval(renew, (leaseSeconds * 1000) / 3);

  type Finish = Omit<Parameters<typeof api.tasks.update.mutate>[0], "agent_id" | "task_id" | "lease_id">;
  const finish = (body: Finish) => api.tasks.update.mutate({ agent_id, task_id: task.id, lease_id: lease.id, ...body });
  try {
    const result = await work(task.input as Input, task.attempts, stop.signal).catch((error: Error) => error);
    if (outcome === "lost") {
      console.log("lost", task.id); // another worker may have the task now: leave it
    } else if (outcome === "cancel" && result instanceof Error) {
      await finish({ status: "cancelled" });
      console.log("cancelled", task.id);
    } else if (result instanceof Error) {
      const error = { code: "work_failed", message: result.message, details: null };
      const failed = await finish({ status: "failed", error, retry: true });
      console.log("failed", task.id, failed.status === "pending" ? `retry at ${failed.run_at}` : "for good");
    } else {
      await finish({ status: "succeeded", result });
      console.log("succeeded", task.id);
    }
  } catch (error) {
    // 409: the lease ended before the report (it expired, or the task was settled): the service decided.
    if (!(error instanceof TRPCClientError) || error.data?.httpStatus !== 409) throw error;
    console.log("lost", task.id);
  } finally {
    clearInterval(renewing);
  }
}
console.log("idle");
