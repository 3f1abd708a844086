import { isUtf8 } from "node:buffer";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import express from "express";
import packageJson from "../package.json" with { type: "json" };
import { docsRouter, docsRoutes } from "./http/docs.js";
import { errorResponse } from "./http/error-response.js";
import { errorHandler, notFoundOrMethodNotAllowed, type Route } from "./http/fallback.js";
import { limitJsonDepth } from "./http/json-depth.js";
import { buildOpenApiDocument } from "./http/openapi.js";
import { procedureMetas } from "./http/procedure-metas.js";
import { requestContext } from "./http/request-context.js";
import { restHandler } from "./http/rest.js";
import { appRouter } from "./routers/index.js";
import { type AppDeps, contextFactory } from "./trpc/context.js";

export const version = packageJson.version;

/** The whole HTTP surface; listening is the caller's job (main.ts, tests). */
export function createApp(deps: AppDeps) {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  const restRoutes: Route[] = [...procedureMetas(appRouter).values()].flatMap((meta) =>
    meta.openapi ? [{ method: meta.openapi.method, path: meta.openapi.path }] : [],
  );
  const document = buildOpenApiDocument(appRouter, version);

  app.use(requestContext(deps.logger));
  app.use(
    express.json({
      limit: deps.config.bodyLimit,
      // Bytes that are not UTF-8 are refused, never silently replaced.
      verify: (_req, _res, body) => {
        if (!isUtf8(body)) throw new Error("Body is not valid UTF-8");
      },
    }),
  );
  app.use(limitJsonDepth);
  app.use(
    "/trpc",
    createExpressMiddleware({
      router: appRouter,
      createContext: contextFactory(deps),
      onError({ error }) {
        if (errorResponse(error).status === 500) deps.logger.error({ err: error }, "unexpected error");
      },
    }),
  );
  app.use(docsRouter(document));
  app.use(restHandler(appRouter, deps, restRoutes));
  app.use(notFoundOrMethodNotAllowed([...restRoutes, ...docsRoutes]));
  app.use(errorHandler(deps.logger));
  return app;
}
