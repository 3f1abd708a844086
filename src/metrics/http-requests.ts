import type { ServerResponse } from "node:http";
import { httpRequestDuration, httpRequests } from "./registry.js";

const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The route label of a request no template matched: one value, whatever the path. */
export const unmatchedRoute = "unmatched";

/**
 * Counts the request and its duration under `route` (a template such as
 * `/agents/{agent_id}`) once its response has been written.
 */
export function observeRequest(res: ServerResponse, method: string, route: string): void {
  const started = performance.now();
  // A client may send any method name: only the known ones become label values.
  const methodLabel = knownMethods.has(method) ? method : "OTHER";
  res.once("finish", () => {
    const labels = { method: methodLabel, route, status: res.statusCode };
    httpRequests.inc(labels);
    httpRequestDuration.observe(labels, (performance.now() - started) / 1000);
  });
}
