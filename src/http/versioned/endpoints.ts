import type { Meta } from "../rest/procedures.js";

export type ApiVersion = 1 | 2;
export const apiVersions: readonly ApiVersion[] = [1, 2];

/** What a versioned route does: run a procedure, answer the health check, or point to its new name. */
export type Endpoint<R> = { kind: "procedure"; route: R } | { kind: "health" } | { kind: "redirect"; location: string };

/** Renamed endpoints answer 301 in the old version (docs/api/data.md). */
export const renamedRoutes = [
  { version: 1, route: "/cars/list", location: "/v2/cars" },
  { version: 1, route: "/coe/pqp", location: "/v2/pqp" },
] as const;

/**
 * Every versioned route by version and path without its prefix: the
 * procedures whose meta carries `apiVersion`, v1's health check and the
 * renamed routes. `R` is whatever describes a procedure to the caller (the
 * dispatcher's compiled route, or the document's meta).
 */
export function endpointTable<R extends { meta: Meta }>(routes: Iterable<R>) {
  const table = new Map<ApiVersion, Map<string, Endpoint<R>>>(apiVersions.map((version) => [version, new Map()]));
  for (const route of routes) {
    const { apiVersion, openapi } = route.meta;
    if (!apiVersion || !openapi) continue;
    table.get(apiVersion)?.set(openapi.path.slice(`/v${apiVersion}`.length), { kind: "procedure", route });
  }
  table.get(1)?.set("/health", { kind: "health" });
  for (const { version, route, location } of renamedRoutes)
    table.get(version)?.set(route, { kind: "redirect", location });
  return table;
}

export type EndpointTable<R> = ReturnType<typeof endpointTable<R & { meta: Meta }>>;

/** The groups of a version (`cars`, `coe`, …), in the order their routes were added: the document's tags. */
export const groupsOf = (endpoints: Map<string, unknown> | undefined) => [
  ...new Set([...(endpoints?.keys() ?? [])].map((route) => route.split("/")[1] as string)),
];
