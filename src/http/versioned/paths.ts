import type { AppError } from "../../errors.js";
import { methodNotAllowed, notFound } from "../../errors.js";
import { healthReport } from "../../modules/data/health.js";
import { type AppDeps, createContext } from "../../trpc/context.js";
import { reportedError, sendEmpty, sendJson, sendRestError } from "../respond.js";
import type { PathHandler, RestRequest } from "../rest/dispatcher.js";
import type { ProcedureRoute } from "../rest/procedures.js";
import { type ApiVersion, type Endpoint, endpointTable } from "./endpoints.js";
import { unsupportedVersionResponse, versionedError } from "./formats.js";
import { markDeprecated, queryStringOf, sendCacheable } from "./headers.js";

/**
 * The versioned data groups (docs/api/data.md) as a plug-in of the REST dispatcher:
 * `/v1/…` and `/v2/…`, and the root as the default version or the one
 * `X-API-Version` names. Each route runs its procedure as REST routes do, so
 * validation and business rules are the ones /trpc uses; this adds only what
 * is HTTP: version choice, each version's error format, deprecation headers,
 * redirects and caching. Returns the paths to add to the route table.
 */
export function dataPaths(routes: ProcedureRoute[], deps: AppDeps): [string, PathHandler][] {
  const table = endpointTable(routes);
  const { defaultApiVersion, apiV1Sunset: sunset } = deps.config;

  /** The version that answers; undefined when the request named one this service does not serve. */
  function versionOf(request: RestRequest, fixed: ApiVersion | undefined): ApiVersion | undefined {
    if (fixed) return fixed;
    request.res.setHeader("Vary", "X-API-Version");
    const asked = request.req.headers["x-api-version"];
    const value = typeof asked === "string" ? asked.trim() : asked?.join(",");
    if (value === undefined) return defaultApiVersion;
    return value === "1" || value === "2" ? (Number(value) as ApiVersion) : undefined;
  }

  /** X-API-Version on every response, and v1's deprecation headers once it has a sunset date. */
  function markVersion(request: RestRequest, version: ApiVersion, route: string) {
    request.res.setHeader("X-API-Version", String(version));
    const endpoint = table.get(version)?.get(route);
    if (!endpoint || version !== 1 || !sunset) return;
    const successor = endpoint.kind === "redirect" ? endpoint.location : table.get(2)?.has(route) && `/v2${route}`;
    markDeprecated(request.res, sunset, successor || undefined, request.query);
  }

  function sendVersionedError(request: RestRequest, version: ApiVersion, error: AppError) {
    const { status, headers, body } = versionedError(error, version);
    sendJson(request.res, status, body, headers);
  }

  async function run(request: RestRequest, version: ApiVersion, endpoint: Endpoint<ProcedureRoute>) {
    const { res } = request;
    if (endpoint.kind === "redirect") {
      return sendEmpty(res, 301, {
        Location: `${endpoint.location}${queryStringOf(request.query)}`,
        "X-API-Deprecated": "true",
      });
    }
    if (endpoint.kind === "health") {
      const { ok, body } = await healthReport(deps.db);
      // A health check reports the present: never from a cache.
      return sendJson(
        res,
        ok ? 200 : 503,
        body,
        ok ? { "Cache-Control": "no-store" } : { "Cache-Control": "no-store", "Retry-After": "5" },
      );
    }
    try {
      const { route } = endpoint;
      const input = await route.readInput(request);
      sendCacheable(request.req, res, await route.invoke(createContext(deps, request.req, request.requestId), input));
    } catch (error) {
      sendVersionedError(request, version, reportedError(error, request.log, request.requestId));
    }
  }

  /** One versioned path: `fixed` for /v1 and /v2, undefined at the root. */
  const pathHandler = (route: string, fixed: ApiVersion | undefined): PathHandler => ({
    async handle(request) {
      const version = versionOf(request, fixed);
      // Another method on a known route: 405 with Allow, before any body is read, and whatever
      // X-API-Version says: no version of the path answers that method (docs/http.md).
      if (request.method !== "GET" && request.method !== "HEAD") {
        markVersion(request, version ?? 1, route);
        return sendRestError(request.res, methodNotAllowed(["GET"]));
      }
      if (!version) {
        const value = String(request.req.headers["x-api-version"]).trim();
        const { status, body } = unsupportedVersionResponse(value);
        return sendJson(request.res, status, body, { "X-API-Version": "1" });
      }
      markVersion(request, version, route);
      const endpoint = table.get(version)?.get(route);
      if (!endpoint) return sendRestError(request.res, notFound());
      await run(request, version, endpoint);
    },
    refuse(request, error) {
      // A refused request in an unsupported version is still answered, in v1's format.
      const version = versionOf(request, fixed) ?? 1;
      markVersion(request, version, route);
      sendVersionedError(request, version, error);
    },
  });

  const paths: [string, PathHandler][] = [];
  for (const [version, endpoints] of table) {
    for (const route of endpoints.keys()) paths.push([`/v${version}${route}`, pathHandler(route, version)]);
  }
  const atRoot = new Set([...table.values()].flatMap((endpoints) => [...endpoints.keys()]));
  for (const route of atRoot) paths.push([route, pathHandler(route, undefined)]);
  return paths;
}
