import type { IncomingMessage } from "node:http";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import type { RequestHandler, Response } from "express";
import { appErrorOf, trpcErrorOf } from "../errors.js";
import { Replayed, replayedHeader } from "../idempotency/replayed.js";
import type { RequestLimit } from "../limits/request-limit.js";
import { trpcCalls } from "../limits/trpc-calls.js";
import type { AppRouter } from "../modules/index.js";
import { type AppDeps, createContext } from "../trpc/context.js";
import { hasBody, readBody } from "./body.js";
import type { admission } from "./guards/admission.js";
import { requestIdSent } from "./guards/request-id.js";
import { reportedError } from "./respond.js";

export interface TrpcLimits {
  /** The load shedding every request goes through, once its body has arrived. */
  admission: ReturnType<typeof admission>;
  /** RATE_LIMIT_PER_MINUTE, each call of a batch counting as one request. */
  requests?: RequestLimit;
}

/** Whether a call's result is an answer kept for its Idempotency-Key (a batch: any of its calls). */
const anyReplayed = (data: readonly unknown[]) =>
  data.some((item) => (item as { result?: { data?: unknown } })?.result?.data instanceof Replayed);

/**
 * /trpc, in tRPC's own format for everything, failures included. Before tRPC
 * runs, the body is read here as REST bodies are (uncompressed, within
 * BODY_LIMIT, valid UTF-8) and handed over as text, which tRPC parses itself:
 * a malformed one is tRPC's PARSE_ERROR, never the REST error body. Then the
 * request is admitted (or shed) and counted against the rate limit; a
 * refusal, or a body that cannot be read, becomes the error of every call of
 * the request (`next(error)`: tRPC's documented hook).
 */
export function trpcHandler(router: AppRouter, deps: AppDeps, limits: TrpcLimits): RequestHandler {
  return createExpressMiddleware({
    router,
    // A batch is one request doing the work of many: bounded, so one request cannot list 450 pages at once.
    maxBatchSize: deps.config.trpcMaxBatchSize,
    async middleware(req: IncomingMessage & { body?: unknown }, res: Response, next: (error?: unknown) => void) {
      try {
        if (hasBody(req)) req.body = await readBody(req, deps.config.bodyLimit);
      } catch (error) {
        return next(trpcErrorOf(appErrorOf(error)));
      }
      const refusal = (await limits.admission.admit(res)) ?? (await limits.requests?.take(req, res, trpcCalls(req)));
      next(refusal ? trpcErrorOf(refusal) : undefined);
    },
    createContext: ({ req, res }) => createContext(deps, req, requestIdSent(res)),
    onError({ error, req }) {
      reportedError(error, deps.logger, requestIdSent((req as { res?: Response }).res));
    },
    responseMeta({ errors, info, data }) {
      // The contract names the charset; the headers a 401, 429 or 503 must carry come from the error.
      const headers: Record<string, string> =
        info?.type === "subscription"
          ? {}
          : {
              "content-type": "application/json; charset=utf-8",
              ...(anyReplayed(data) ? replayedHeader : undefined),
            };
      const first = errors[0];
      return { headers: first ? { ...headers, ...appErrorOf(first).headers } : headers };
    },
  });
}
