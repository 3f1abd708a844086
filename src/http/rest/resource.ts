import type { AppError } from "../../errors.js";
import { replayedHeader } from "../../idempotency/replayed.js";
import { type AppDeps, type Context, createContext } from "../../trpc/context.js";
import { methodNotAllowedError } from "../error-responses.js";
import { type Headers, reportedError, sendEmpty, sendJson, sendRestError } from "../respond.js";
import type { PathHandler, RestRequest } from "./dispatcher.js";
import { writeEventStream } from "./event-stream.js";
import { pageHeaders } from "./page-headers.js";
import { etagHeader, notModified, readIfMatch } from "./preconditions.js";
import type { ProcedureRoute } from "./procedures.js";

/**
 * The status and headers of a success, from the procedure's meta: 201 with
 * `Location` for a creation, 204 with no body for a deletion, 200 otherwise,
 * or the other success the result chose; plus whatever `responseHeaders`
 * derives from the result; a versioned resource's ETag, and 304 for a GET
 * that already has it.
 */
function writeSuccess(request: RestRequest, route: ProcedureRoute, data: unknown, input: unknown, ctx: Context) {
  const { successStatus = 200, location, responseHeaders, otherSuccess } = route.meta;
  const status = otherSuccess?.when(data, input) ? otherSuccess.status : successStatus;
  let headers: Headers | undefined;
  if (location && status === 201) headers = { Location: location(data as Parameters<typeof location>[0]) };
  if (responseHeaders && data !== null) headers = { ...headers, ...responseHeaders(data, input) };
  if (ctx.page) headers = { ...headers, ...pageHeaders(request.req.url ?? "", ctx.page) };
  const replayed = replayedHeader(request.req);
  if (replayed) headers = { ...headers, ...replayed };
  const etag = etagHeader(route, data);
  if (etag) headers = { ...headers, ...etag };
  if (status === 200 && notModified(request, etag)) return sendEmpty(request.res, 304, etag);
  if (status === 204) return sendEmpty(request.res, 204, headers);
  sendJson(request.res, status, data, headers);
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
 * the contract's format (SPEC §1, §5): another method is 405 with `Allow`,
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
      if (!route) return refuse(request, methodNotAllowedError(allowed));
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
          writeSuccess(request, route, await route.invoke(ctx, input, signal), input, ctx);
        }
      } catch (error) {
        const appError = reportedError(error, request.log, request.requestId);
        // A stream that fails after its first bytes can only stop.
        if (request.res.headersSent) request.res.end();
        else sendRestError(request.res, appError, replayedHeader(request.req));
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
