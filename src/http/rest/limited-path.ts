import type { RequestLimit } from "../../limits/request-limit.js";
import type { PathHandler } from "./dispatcher.js";

// Health checks answer probes and load balancers, which must never be throttled.
const unlimited = /(^|\/)health$/;

/**
 * The path's handler with the request limit in front: the request is counted
 * before it runs, and refused in the path's own format (docs/errors.md, or the data
 * version's) when its sender is over the limit. Without a limit, the handler
 * itself.
 */
export function limitedPath(path: string, handler: PathHandler, limit: RequestLimit | undefined): PathHandler {
  if (!limit || unlimited.test(path)) return handler;
  return {
    refuse: handler.refuse,
    async handle(request) {
      const refusal = await limit.take(request.req, request.res);
      if (refusal) handler.refuse(request, refusal);
      else await handler.handle(request);
    },
  };
}
