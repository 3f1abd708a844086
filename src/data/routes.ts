import type { Route } from "../http/fallback.js";
import { procedureMetas } from "../http/procedure-metas.js";

export type ApiVersion = 1 | 2;
export const apiVersions: readonly ApiVersion[] = [1, 2];

/** What a versioned route does: run a procedure, answer the health check, or point to its new name. */
export type Endpoint =
  | { kind: "procedure"; procedure: string }
  | { kind: "health" }
  | { kind: "redirect"; location: string };

/** Renamed endpoints answer 301 in the old version (SPEC §8.4). */
export const renamedRoutes = [
  { version: 1, route: "/cars/list", location: "/v2/cars" },
  { version: 1, route: "/coe/pqp", location: "/v2/pqp" },
] as const;

/**
 * Every versioned route by version and path without its prefix: the
 * procedures whose meta carries `apiVersion`, v1's health check and the
 * renamed routes.
 */
export function endpointTable(router: { _def: { procedures: object } }) {
  const table = new Map<ApiVersion, Map<string, Endpoint>>(apiVersions.map((version) => [version, new Map()]));
  for (const [procedure, meta] of procedureMetas(router)) {
    if (!meta.apiVersion || !meta.openapi) continue;
    const route = meta.openapi.path.slice(`/v${meta.apiVersion}`.length);
    table.get(meta.apiVersion)?.set(route, { kind: "procedure", procedure });
  }
  table.get(1)?.set("/health", { kind: "health" });
  for (const { version, route, location } of renamedRoutes)
    table.get(version)?.set(route, { kind: "redirect", location });
  return table;
}

/** The routes for the 404/405 fallback: each under its prefix, and at the root. */
export function versionedRoutes(table: ReturnType<typeof endpointTable>): Route[] {
  return [...table].flatMap(([version, endpoints]) =>
    [...endpoints.keys()].flatMap((route) => [
      { method: "GET", path: `/v${version}${route}` },
      { method: "GET", path: route },
    ]),
  );
}
