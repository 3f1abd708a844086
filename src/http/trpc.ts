import type { IncomingMessage } from "node:http";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import type { Request, RequestHandler, Response } from "express";
import { replayedHeader } from "../idempotency/replayed.js";
import type { RequestLimit } from "../limits/request-limit.js";
import { trpcCalls } from "../limits/trpc-calls.js";
import type { AppRouter } from "../modules/index.js";
import { type AppDeps, createContext } from "../trpc/context.js";
import { hasBody, readBody } from "./body.js";
import { appErrorOf, trpcErrorOf } from "./error-responses.js";
import { reportedError } from "./respond.js";
import type { Handoff } from "./rest/dispatcher.js";

const handoffOf = (res: Response) => res.locals as Handoff;

/**
 * /trpc, in tRPC's own format for everything, failures included. Before tRPC
 * runs, the body is read here as REST bodies are (uncompressed, within
 * BODY_LIMIT, valid UTF-8) and handed over as text, which tRPC parses itself:
 * a malformed one is tRPC's PARSE_ERROR, never the REST error body. A request
 * refused by admission, or a body that cannot be read, becomes the error of
 * every call of the request (`next(error)`: tRPC's documented hook). So does
 * the rate limit's 429, each call of a batch counting as one request.
 */
export function trpcHandler(router: AppRouter, deps: AppDeps, limit?: RequestLimit): RequestHandler {
  return createExpressMiddleware({
    router,
    // A batch is one request doing the work of many: bounded, so one request cannot list 450 pages at once.
    maxBatchSize: deps.config.trpcMaxBatchSize,
    async middleware(req: IncomingMessage & { body?: unknown }, res: Response, next: (error?: unknown) => void) {
      const refusal = handoffOf(res).refusal ?? (await limit?.take(req, res, trpcCalls(req)));
      if (refusal) return next(trpcErrorOf(refusal));
      if (!hasBody(req)) return next();
      try {
        req.body = await readBody(req, deps.config.bodyLimit);
        next();
      } catch (error) {
        next(trpcErrorOf(appErrorOf(error)));
      }
    },
    createContext: ({ req, res }) => createContext(deps, req, handoffOf(res).requestId),
    onError({ error, req }) {
      reportedError(error, deps.logger, handoffOf((req as Request).res as Response).requestId);
    },
    responseMeta({ ctx, errors, info }) {
      // The contract names the charset; the headers a 401, 429 or 503 must carry come from the error.
      const headers: Record<string, string> =
        info?.type === "subscription"
          ? {}
          : { "content-type": "application/json; charset=utf-8", ...replayedHeader(ctx?.req) };
      const first = errors[0];
      return { headers: first ? { ...headers, ...appErrorOf(first).headers } : headers };
    },
  });
}
