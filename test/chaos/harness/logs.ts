import { statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { Service } from "./service.js";

/**
 * The size of the service's log once it has stopped growing for `quietMs`
 * (its logger writes asynchronously), so bytes after it belong to what came next.
 */
export async function settledLogSize(service: Service, quietMs = 500, deadlineMs = 10_000): Promise<number> {
  const deadline = Date.now() + deadlineMs;
  let size = statSync(service.logFile).size;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    await sleep(50);
    const now = statSync(service.logFile).size;
    if (now !== size) {
      size = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= quietMs) {
      return size;
    }
  }
  throw new Error(`the log of ${service.url} kept growing for ${deadlineMs} ms`);
}

/** Lines of the log from byte `from` on. */
export function logLinesFrom(service: Service, from: number): string[] {
  return Buffer.from(service.log())
    .subarray(from)
    .toString("utf8")
    .split("\n")
    .filter((line) => line.length > 0);
}
