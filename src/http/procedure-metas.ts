import type { OpenApiMeta } from "trpc-to-openapi";
import type { ProcedureMeta } from "../trpc/procedures.js";

type Meta = OpenApiMeta<ProcedureMeta>;
type Procedures = Record<string, { _def: { meta?: unknown } }>;

/** Every procedure's meta by its dotted path (`agents.create`), read once. */
export function procedureMetas(router: { _def: { procedures: object } }): Map<string, Meta> {
  const metas = new Map<string, Meta>();
  for (const [path, procedure] of Object.entries(router._def.procedures as Procedures)) {
    metas.set(path, (procedure._def.meta ?? {}) as Meta);
  }
  return metas;
}
