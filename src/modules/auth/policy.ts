import type { Config } from "../../config.js";
import { type Meta, type Scope, scopes } from "../../trpc/meta.js";

export type Role = "admin" | "member" | "viewer";
export const roles: readonly Role[] = ["admin", "member", "viewer"];

const readScopes = scopes.filter((scope) => scope.endsWith(":read"));

/** What each role may do in its project: viewer every `:read` scope, member every scope but `admin`, admin all. */
export const scopesOfRole: Record<Role, ReadonlySet<Scope>> = {
  admin: new Set(scopes),
  member: new Set(scopes.filter((scope) => scope !== "admin")),
  viewer: new Set(readScopes),
};

/**
 * What a request without credentials may do, in the default project, under
 * AUTH_POLICY: `open` every scope but `admin`, `writes` the `:read` scopes
 * but `webhooks:read` (managing webhooks, reading them included, needs what
 * writing agents needs: their URLs are not for everyone), `all` nothing.
 */
export const anonymousScopes: Record<Config["authPolicy"], ReadonlySet<Scope>> = {
  open: scopesOfRole.member,
  writes: new Set(readScopes.filter((scope) => scope !== "webhooks:read")),
  all: new Set(),
};

/** Credentials a request can carry: `Authorization: Bearer <jwt>` or `X-API-Key`. */
export type Credential = "bearer" | "apiKey";

/**
 * How an operation may be called under the running policy: the credentials
 * it takes, and whether it may be called without any. The middleware judges
 * by the same rule, and the document's security is written from it.
 */
export function credentialsOf(
  meta: Meta,
  policy: Config["authPolicy"],
): { credentials: Credential[]; optional: boolean } {
  switch (meta.access) {
    case undefined:
      return { credentials: [], optional: true };
    case "user":
      return { credentials: ["bearer"], optional: false };
    case "caller":
      return { credentials: ["bearer", "apiKey"], optional: policy !== "all" };
    case "project":
      return {
        credentials: ["bearer", "apiKey"],
        optional: meta.scope !== undefined && anonymousScopes[policy].has(meta.scope),
      };
  }
}
