import type { Request, RequestHandler, Response } from "express";
import { notFoundResponse } from "../http/error-response.js";
import { notFoundOrMethodNotAllowed } from "../http/fallback.js";
import { appRouter, createCaller } from "../routers/index.js";
import { healthReport } from "../services/health.js";
import { type AppDeps, createContextInner } from "../trpc/context.js";
import { unsupportedVersionResponse, versionedErrorResponse } from "./errors.js";
import { markDeprecated, queryStringOf, sendJson } from "./headers.js";
import { type ApiVersion, type Endpoint, endpointTable, versionedRoutes } from "./routes.js";

type Procedure = (input: unknown) => Promise<unknown>;

/**
 * The versioned data groups over HTTP (SPEC §8): `/v1/…` and `/v2/…`, and the
 * root as the default version or the one `X-API-Version` names. Each route
 * runs its procedure through a server-side caller, so validation and business
 * rules are the ones /trpc uses; this layer adds only what is HTTP: version
 * choice, formats of errors, deprecation headers, redirects and caching.
 * Mounted before the body parser: these routes never read a body, so none
 * can fail them in another format.
 */
export function versionedApi(deps: AppDeps) {
  const table = endpointTable(appRouter);
  const defaultVersion = deps.config.defaultApiVersion;
  const sunset = deps.config.apiV1Sunset;
  const routes = versionedRoutes(table);
  const methodNotAllowed = notFoundOrMethodNotAllowed(routes);
  const known = new Set([...table.values()].flatMap((endpoints) => [...endpoints.keys()]));

  async function run(req: Request, res: Response, version: ApiVersion, endpoint: Endpoint) {
    if (endpoint.kind === "redirect") {
      res.set({ Location: `${endpoint.location}${queryStringOf(req)}`, "X-API-Deprecated": "true" });
      res.status(301).end();
      return;
    }
    if (endpoint.kind === "health") {
      const { ok, body } = await healthReport(deps.db);
      // A health check reports the present: never from a cache.
      res.set("Cache-Control", "no-store");
      if (!ok) res.set("Retry-After", "5");
      sendJson(req, res, ok ? 200 : 503, body, false);
      return;
    }
    const caller = createCaller(createContextInner(deps, { req, res, log: res.locals.log }));
    const procedure = endpoint.procedure
      .split(".")
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as Procedure;
    try {
      sendJson(req, res, 200, await procedure({ ...req.query }), true);
    } catch (error) {
      const { status, headers, body } = versionedErrorResponse(error, version);
      if (status === 500) res.locals.log.error({ err: error }, "unexpected error");
      res.status(status).set(headers).json(body);
    }
  }

  const handler: RequestHandler = async (req, res, next) => {
    const prefixed = /^\/v([12])(\/.*)$/i.exec(req.path);
    const route = (prefixed?.[2] ?? req.path).toLowerCase().replace(/(.)\/$/, "$1");
    if (!known.has(route)) return next();

    let version: ApiVersion;
    if (prefixed) {
      version = Number(prefixed[1]) as ApiVersion;
      if (!table.get(version)?.has(route)) return next();
    } else {
      res.vary("X-API-Version");
      const asked = req.get("X-API-Version")?.trim();
      if (asked !== undefined && asked !== "1" && asked !== "2") {
        const { status, body } = unsupportedVersionResponse(asked);
        res.set("X-API-Version", "1").status(status).json(body);
        return;
      }
      version = asked === undefined ? defaultVersion : (Number(asked) as ApiVersion);
    }
    res.set("X-API-Version", String(version));
    const endpoint = table.get(version)?.get(route);
    if (endpoint && version === 1 && sunset) {
      const successor = endpoint.kind === "redirect" ? endpoint.location : table.get(2)?.has(route) && `/v2${route}`;
      markDeprecated(req, res, sunset, successor || undefined);
    }
    // Another method on a known route: 405 with Allow, before any body is read.
    if (req.method !== "GET" && req.method !== "HEAD") return methodNotAllowed(req, res, next);
    if (!endpoint) {
      res.status(404).json(notFoundResponse().body);
      return;
    }
    await run(req, res, version, endpoint);
  };

  return { handler, routes };
}
