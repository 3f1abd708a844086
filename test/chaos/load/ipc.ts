// The load generators' side of test/chaos/harness/load-process.ts.
import { monitorEventLoopDelay } from "node:perf_hooks";

export interface Message {
  type: string;
  [key: string]: unknown;
}

const received: Message[] = [];
const waiting: { type: string; resolve: (message: Message) => void }[] = [];
process.on("message", (message: Message) => {
  const waiter = waiting.findIndex((w) => w.type === message.type);
  if (waiter >= 0) waiting.splice(waiter, 1)[0]?.resolve(message);
  else received.push(message);
});

/** The next message of this type from the test. */
export function next<T extends Message = Message>(type: string): Promise<T> {
  const index = received.findIndex((m) => m.type === type);
  if (index >= 0) return Promise.resolve(received.splice(index, 1)[0] as T);
  return new Promise((resolve) => waiting.push({ type, resolve: (message) => resolve(message as T) }));
}

export async function input<T>(): Promise<T> {
  return (await next<{ type: "input"; input: T }>("input")).input;
}

export function send(message: Message) {
  process.send?.(message);
}

/** Sends the result and exits once it is delivered (IPC is asynchronous). */
export function finish(result: unknown): void {
  process.send?.({ type: "result", result }, () => process.exit(0));
}

/**
 * This process's own event-loop delay: a load generator that lags would
 * add its lag to every latency it reports, so it reports how much it lagged.
 */
export function ownLag() {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  return { p99Ms: () => Math.round(histogram.percentile(99) / 1e5) / 10 };
}

/** Sorted-sample percentile (nearest rank); 0 for no samples. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export const sortedNumbers = (values: number[]) => [...values].sort((a, b) => a - b);
