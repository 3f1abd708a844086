import type { Context } from "../../trpc/context.js";
import { etagOf, noneMatchHits, parseIfMatch } from "../etags.js";
import type { Headers } from "../respond.js";
import type { RestRequest } from "./dispatcher.js";
import type { ProcedureRoute } from "./procedures.js";

const writes = new Set(["PUT", "PATCH", "DELETE"]);

/**
 * A write to a versioned resource says which versions it accepts with
 * `If-Match` only (docs/http.md): the tRPC field `expected_version` is not part
 * of the REST operation, so a body or query field of that name is dropped.
 */
export function readIfMatch(route: ProcedureRoute, request: RestRequest, ctx: Context, input: unknown): void {
  if (!route.meta.versioned || !writes.has(route.method)) return;
  if (input && typeof input === "object") delete (input as { expected_version?: unknown }).expected_version;
  ctx.ifMatch = parseIfMatch(request.req.headers["if-match"]);
}

/** `ETag` of a versioned resource in the result, or undefined. */
export function etagHeader(route: ProcedureRoute, data: unknown): Headers | undefined {
  const version = (data as { version?: unknown } | null)?.version;
  return route.meta.versioned && typeof version === "number" ? { ETag: etagOf(version) } : undefined;
}

/** A GET (or HEAD) whose `If-None-Match` names the resource's current tag: 304, no body. */
export const notModified = (request: RestRequest, headers: Headers | undefined): boolean =>
  (request.method === "GET" || request.method === "HEAD") &&
  headers?.ETag !== undefined &&
  noneMatchHits(request.req.headers["if-none-match"], headers.ETag);
