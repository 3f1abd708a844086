import type { RequestListener } from "node:http";
import express from "express";
import packageJson from "../package.json" with { type: "json" };
import type { Config } from "./config.js";
import { consoleRouter, consoleRoutes } from "./http/console.js";
import { docsRouter, docsRoutes } from "./http/docs.js";
import { errorHandler, notFoundOrMethodNotAllowed } from "./http/fallback.js";
import { admission } from "./http/guards/admission.js";

type Shedding = ReturnType<typeof admission>;

import { withBrowserHeaders } from "./http/guards/browser-headers.js";
import { createLimits, type Limits } from "./http/limits.js";
import { buildOpenApiDocument } from "./http/openapi/document.js";
import { withParameterExamples } from "./http/openapi/parameter-examples.js";
import { documentRateLimits } from "./http/openapi/rate-limits.js";
import { tokenPaths } from "./http/openapi/token.js";
import { operationsRoutes } from "./http/operations/routes.js";
import { createDispatcher, type PathHandler } from "./http/rest/dispatcher.js";
import { limitedPath } from "./http/rest/limited-path.js";
import { procedureRoutes } from "./http/rest/procedures.js";
import { restResources } from "./http/rest/resource.js";
import { RouteTable } from "./http/rest/table.js";
import { tokenRouter, tokenRoutes } from "./http/token.js";
import { trpcHandler } from "./http/trpc.js";
import { isTrpcPath } from "./http/trpc-path.js";
import { documentVersionedRoutes } from "./http/versioned/openapi.js";
import { dataPaths } from "./http/versioned/paths.js";
import { unmatchedRoute } from "./metrics/http-requests.js";
import { authenticator } from "./modules/auth/authenticator.js";
import { appRouter } from "./modules/index.js";
import type { AppDeps, ServiceDeps } from "./trpc/context.js";

export const version = packageJson.version;

/**
 * The document /openapi.json serves (`npm run openapi:document` writes the same one): what each
 * operation requires follows AUTH_POLICY; the data versions follow their settings; the 429s and
 * RateLimit fields appear when RATE_LIMIT_PER_MINUTE is on.
 */
export const openApiDocument = (config: Config) =>
  withParameterExamples(
    documentRateLimits(
      documentVersionedRoutes(
        buildOpenApiDocument(appRouter, version, tokenPaths, config.authPolicy),
        appRouter,
        config,
      ),
      config.rateLimitPerMinute,
    ),
  );

/**
 * Every REST path of the router, compiled once: the versioned data routes
 * through the data module's plug-in, every other procedure as a resource.
 */
function restTable(deps: AppDeps, limits: Limits): RouteTable<PathHandler> {
  const table = new RouteTable<PathHandler>();
  const routes = procedureRoutes(appRouter, deps.config.bodyLimit);
  const versioned = routes.filter((route) => route.meta.apiVersion);
  const resources = routes.filter((route) => !route.meta.apiVersion);
  for (const [path, handler] of [...restResources(resources, deps), ...dataPaths(versioned, deps)]) {
    table.add(path, limitedPath(path, handler, limits.requests));
  }
  return table;
}

/** /trpc, /token, the docs and the fallbacks: what the route table does not serve. */
function expressApp(deps: AppDeps, document: object, limits: Limits, shedding: Shedding) {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use("/trpc", trpcHandler(appRouter, deps, { admission: shedding, requests: limits.requests }));
  app.use(tokenRouter(deps, limits));
  app.use(docsRouter(document));
  app.use(consoleRouter(deps.config.authPolicy));
  app.use(notFoundOrMethodNotAllowed([...docsRoutes, ...tokenRoutes, ...consoleRoutes]));
  app.use(errorHandler(deps.logger));
  return app;
}

const expressPaths = new Set([...docsRoutes, ...tokenRoutes, ...consoleRoutes].map((route) => route.path));

/** The metrics label of a path express serves: its route, never the raw path. */
const expressRoute = (path: string) => {
  if (isTrpcPath(path)) return "/trpc";
  if (/^\/docs\//.test(path)) return "/docs/{asset}";
  if (path.startsWith("/ui/assets/")) return "/ui/assets/{asset}";
  if (path.startsWith("/ui/")) return "/ui/{page}";
  return expressPaths.has(path) ? path : unmatchedRoute;
};

/** The whole HTTP surface as a node:http request handler; listening is the caller's job (main.ts, tests). */
export function createApp(services: ServiceDeps): RequestListener {
  const deps: AppDeps = { ...services, auth: authenticator(services.config) };
  const limits = createLimits(deps);
  const shedding = admission(deps.config.load, deps.db.provider);
  const web = expressApp(deps, openApiDocument(deps.config), limits, shedding);
  const dispatcher = createDispatcher({
    table: restTable(deps, limits),
    admission: shedding,
    bodyLimit: deps.config.bodyLimit,
    logger: deps.logger,
    admitsItself: isTrpcPath,
    operations: operationsRoutes(deps),
    fallbackRoute: expressRoute,
    fallback: web,
  });
  return withBrowserHeaders(deps.config.corsOrigins, dispatcher);
}
