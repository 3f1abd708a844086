import type { AppError } from "../../errors.js";
import { methodNotAllowed } from "../../errors.js";
import { replayedHeader, unwrapReplayed } from "../../idempotency/replayed.js";
import type { Page } from "../../resources/lists.js";
import { type AppDeps, createContext } from "../../trpc/context.js";
import { successOf } from "../../trpc/meta.js";
import { type Headers, reportedError, sendEmpty, sendJson, sendRestError } from "../respond.js";
import type { PathHandler, RestRequest } from "./dispatcher.js";
import { writeEventStream } from "./event-stream.js";
import { pageHeaders } from "./page-headers.js";
import { etagHeader, notModified, readIfMatch } from "./preconditions.js";
import type { ProcedureRoute } from "./procedures.js";

/**
 * A success as the procedure's meta and result say (trpc/meta.ts): 201 with
 * `Location` for a creation, 204 with no body for a deletion, 200 otherwise,
 * or the other success the result chose; the headers `responseHeaders`
 * derives from the result; a page's items as the body with its `Link` and
 * `X-Total-Count`; a versioned resource's ETag, and 304 for a GET that
 * already has it; `Idempotent-Replayed` for an answer kept for its key.
 */
function writeSuccess(request: RestRequest, route: ProcedureRoute, result: unknown, input: unknown) {
  const { data, replayed } = unwrapReplayed(result);
  const { meta } = route;
  const { status, headers: success } = successOf(meta, data, input);
  let headers: Headers | undefined = status === 201 ? success : undefined;
  if (meta.responseHeaders && data !== null) headers = { ...headers, ...meta.responseHeaders(data, input) };
  let body = data;
  if (meta.paged) {
    const page = data as Page<unknown>;
    headers = { ...headers, ...pageHeaders(request.req.url ?? "", page) };
    body = page.items;
  }
  if (replayed) headers = { ...headers, ...replayedHeader };
  const etag = etagHeader(route, data);
  if (etag) headers = { ...headers, ...etag };
  if (status === 200 && notModified(request, etag)) return sendEmpty(request.res, 304, etag);
  if (status === 204) return sendEmpty(request.res, 204, headers);
  sendJson(request.res, status, body, headers);
}

/** Aborted when the client goes away before its answer: a long poll stops waiting for nobody. */
function leaving(request: RestRequest): AbortController {
  const leave = new AbortController();
  request.res.once("close", () => {
    if (!request.res.writableFinished) leave.abort();
  });
  return leave;
}

/**
 * One REST path (`/agents/{agent_id}`) and the procedures at its methods, in
 * the contract's format (docs/http.md, docs/errors.md): another method is 405 with `Allow`,
 * HEAD answers as GET without a body.
 */
export function restResource(routes: ProcedureRoute[], deps: AppDeps): PathHandler {
  const byMethod = new Map(routes.map((route) => [route.method as string, route]));
  const allowed = [...byMethod.keys()];
  const refuse = (request: RestRequest, error: AppError) => sendRestError(request.res, error);
  return {
    refuse,
    waits(method) {
      const meta = (byMethod.get(method) ?? (method === "HEAD" ? byMethod.get("GET") : undefined))?.meta;
      if (meta?.stream === "sse") return "stream";
      return meta?.longPoll ? "long-poll" : undefined;
    },
    async handle(request) {
      const route = byMethod.get(request.method) ?? (request.method === "HEAD" ? byMethod.get("GET") : undefined);
      if (!route) return refuse(request, methodNotAllowed(allowed));
      try {
        const input = await route.readInput(request);
        const ctx = createContext(deps, request.req, request.requestId);
        readIfMatch(route, request, ctx, input);
        if (route.meta.stream === "sse") {
          const leave = leaving(request);
          await writeEventStream(request.res, await route.invoke(ctx, input, leave.signal), leave);
        } else {
          // Only a procedure that waits needs to know that its client left; the rest finish in moments.
          const signal = route.meta.longPoll ? leaving(request).signal : undefined;
          writeSuccess(request, route, await route.invoke(ctx, input, signal), input);
        }
      } catch (error) {
        const appError = reportedError(error, request.log, request.requestId);
        // A stream that fails after its first bytes can only stop.
        if (request.res.headersSent) request.res.end();
        else sendRestError(request.res, appError);
      }
    },
  };
}

/** The routes grouped by path, each path a resource: what a table adds for plain REST procedures. */
export function restResources(routes: ProcedureRoute[], deps: AppDeps): [string, PathHandler][] {
  const byPath = new Map<string, ProcedureRoute[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  return [...byPath].map(([path, atPath]) => [path, restResource(atPath, deps)]);
}
