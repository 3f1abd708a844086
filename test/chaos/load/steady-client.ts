// A well-behaved client sending requests at a steady rate, whether or not
// earlier ones were answered (open loop): a stall of the service then shows
// as every request sent during it waiting, not as one slow sample among many.
// Runs for `durationMs`, or until the test sends "stop".

import { type Call, keepAliveAgent, send } from "./http.js";
import { finish, input, next, ownLag, percentile, sortedNumbers, send as tell } from "./ipc.js";

interface Input {
  url: string;
  ratePerSecond: number;
  /** At most this long; "stop" ends it sooner. */
  durationMs: number;
  /** Requests to cycle through; `{n}` in a body becomes a counter. */
  calls: Call[];
  localAddress?: string;
  timeoutMs: number;
}

export interface SteadyResult {
  requests: number;
  succeeded: number;
  p50: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  lagP99: number;
}

const options = await input<Input>();
const lag = ownLag();
const agent = keepAliveAgent(256);
const latencies: number[] = [];
const statuses: Record<string, number> = {};
const pending = new Set<Promise<void>>();
let succeeded = 0;
let counter = 0;
let stopped = false;
next("stop").then(() => {
  stopped = true;
});

async function one(call: Call) {
  const outcome = await send(options.url, {
    ...call,
    body: call.body?.replace("{n}", String(counter)),
    agent,
    localAddress: options.localAddress,
    timeoutMs: options.timeoutMs,
  });
  latencies.push(outcome.ms);
  const key = outcome.status === 0 ? (outcome.error ?? "error") : String(outcome.status);
  statuses[key] = (statuses[key] ?? 0) + 1;
  if (outcome.status >= 200 && outcome.status < 300) succeeded++;
}

const interval = 1000 / options.ratePerSecond;
const started = performance.now();
const endAt = started + options.durationMs;
tell({ type: "started" });
for (let n = 0; !stopped && performance.now() < endAt; n++) {
  const call = options.calls[counter++ % options.calls.length] as Call;
  const request = one(call);
  pending.add(request);
  request.then(() => pending.delete(request));
  // Sleep until the next slot (slots missed while this process lagged are sent at once, not skipped).
  const wait = started + (n + 1) * interval - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
await Promise.all(pending);
agent.destroy();
const sorted = sortedNumbers(latencies);
const result: SteadyResult = {
  requests: latencies.length,
  succeeded,
  p50: percentile(sorted, 50),
  p99: percentile(sorted, 99),
  max: sorted[sorted.length - 1] ?? 0,
  statuses,
  lagP99: lag.p99Ms(),
};
finish(result);
