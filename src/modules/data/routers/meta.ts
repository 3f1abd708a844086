import type { OpenApiMeta } from "trpc-to-openapi";
import type { ProcedureMeta } from "../../../trpc/init.js";

/**
 * The meta of a versioned GET route: `/v{version}{path}`, tagged by version
 * and group; `errorResponses` lists statuses beyond 400 and 500.
 */
export const versionedRoute =
  (version: 1 | 2, group: string) =>
  (path: `/${string}`, summary: string, errorResponses: number[] = []): OpenApiMeta<ProcedureMeta> => ({
    openapi: {
      method: "GET",
      path: `/v${version}${path}`,
      tags: [`v${version} ${group}`],
      summary,
      protect: false,
      errorResponses,
    },
    apiVersion: version,
  });
