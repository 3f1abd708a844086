import type { TRPCError } from "@trpc/server";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { createOpenApiNodeHttpHandler } from "trpc-to-openapi";
import type { AppRouter } from "../routers/index.js";
import type { AppDeps } from "../trpc/context.js";
import { contextFactory } from "../trpc/context.js";
import type { ProcedureMeta } from "../trpc/init.js";
import { errorResponse, validationResponse } from "./error-response.js";
import { type Route, routeMatcher } from "./fallback.js";
import { procedureMetas } from "./procedure-metas.js";

/**
 * Serves the router's procedures at their REST paths. trpc-to-openapi writes
 * its own error body and always a JSON Content-Type; this wrapper rewrites
 * error responses into the contract's bodies and sends 204 with no body and
 * no Content-Type.
 */
export function restHandler(router: AppRouter, deps: AppDeps, routes: Route[]): RequestHandler {
  const metas = procedureMetas(router);
  const methodsOf = routeMatcher(routes);
  const failures = new WeakMap<Request, TRPCError>();

  const handle = createOpenApiNodeHttpHandler({
    router,
    createContext: contextFactory(deps) as never,
    responseMeta({ paths, data, errors }) {
      if (errors.length > 0) return {};
      const meta: ProcedureMeta | undefined = paths?.[0] ? metas.get(paths[0]) : undefined;
      const created = data[0] as { id: string; agent_id?: string } | undefined;
      const location = meta?.location && created ? meta.location(created) : undefined;
      return { status: meta?.successStatus ?? 200, headers: location ? { Location: location } : {} };
    },
    onError({ error, req }) {
      failures.set(req as Request, error);
      if (errorResponse(error).status === 500)
        (req as Request).res?.locals.log.error({ err: error }, "unexpected error");
    },
  });

  return (req: Request, res: Response, next: NextFunction) => {
    // The adapter treats `?limit=` as if the parameter were absent; an empty
    // value is never meaningful here, so it is refused rather than guessed.
    const emptyParams = Object.entries(req.query).filter(([, value]) => value === "");
    if (emptyParams.length > 0 && methodsOf(req.path)?.includes(req.method)) {
      const { status, body } = validationResponse(
        emptyParams.map(([field]) => ({ field, message: "must not be empty" })),
      );
      res.status(status).json(body);
      return;
    }
    const end = res.end.bind(res) as (chunk?: unknown) => Response;
    res.end = ((chunk?: unknown) => {
      const failure = failures.get(req);
      if (failure) {
        const { status, headers, body } = errorResponse(failure);
        res.status(status).set(headers);
        return end(JSON.stringify(body));
      }
      if (res.statusCode === 204) {
        res.removeHeader("Content-Type");
        return end();
      }
      return end(chunk);
    }) as Response["end"];
    handle(req, res, () => {
      res.end = end as Response["end"];
      next();
    });
  };
}
