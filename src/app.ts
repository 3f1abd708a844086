import { isUtf8 } from "node:buffer";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import express from "express";
import packageJson from "../package.json" with { type: "json" };
import type { Config } from "./config.js";
import { versionedApi } from "./data/dispatch.js";
import { documentVersionedRoutes } from "./data/openapi.js";
import { docsRouter, docsRoutes } from "./http/docs.js";
import { errorResponse } from "./http/error-response.js";
import { errorHandler, notFoundOrMethodNotAllowed, type Route } from "./http/fallback.js";
import { limitJsonDepth } from "./http/json-depth.js";
import { loadShedding } from "./http/load-shedding.js";
import { buildOpenApiDocument } from "./http/openapi.js";
import { procedureMetas } from "./http/procedure-metas.js";
import { requestContext } from "./http/request-context.js";
import { restHandler } from "./http/rest.js";
import { tokenRouter, tokenRoutes } from "./http/token.js";
import { tokenPaths } from "./http/token-openapi.js";
import { appRouter } from "./routers/index.js";
import { type AppDeps, contextFactory } from "./trpc/context.js";

export const version = packageJson.version;

/**
 * The document /openapi.json serves (`npm run openapi:document` writes the same one): what each
 * operation requires follows AUTH_POLICY; the data versions follow their settings.
 */
export const openApiDocument = (config: Config) =>
  documentVersionedRoutes(buildOpenApiDocument(appRouter, version, tokenPaths, config.authPolicy), appRouter, config);

/** The whole HTTP surface; listening is the caller's job (main.ts, tests). */
export function createApp(deps: AppDeps) {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  const restRoutes: Route[] = [...procedureMetas(appRouter).values()].flatMap((meta) =>
    meta.openapi ? [{ method: meta.openapi.method, path: meta.openapi.path }] : [],
  );
  const document = openApiDocument(deps.config);
  const versioned = versionedApi(deps);

  app.use(requestContext(deps.logger));
  app.use(loadShedding(deps.config.load));
  app.use(versioned.handler);
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
      onError({ error, req }) {
        const log = (req as express.Request).res?.locals.log ?? deps.logger;
        if (errorResponse(error).status === 500) log.error({ err: error }, "unexpected error");
      },
      // tRPC writes its own error body; the headers a 401 or 429 must carry are added here.
      responseMeta: ({ errors }) => ({ headers: errors[0] ? errorResponse(errors[0]).headers : {} }),
    }),
  );
  app.use(tokenRouter(deps));
  app.use(docsRouter(document));
  app.use(restHandler(appRouter, deps, restRoutes));
  app.use(notFoundOrMethodNotAllowed([...restRoutes, ...docsRoutes, ...tokenRoutes, ...versioned.routes]));
  app.use(errorHandler(deps.logger));
  return app;
}
