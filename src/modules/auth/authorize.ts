import { AppError } from "../../errors.js";
import { type Actor, defaultProjectId } from "../../resources/acting.js";
import type { Context, Principal } from "../../trpc/context.js";
import { actingOf } from "../../trpc/context.js";
import type { Meta } from "../../trpc/meta.js";
import { apiKeysService } from "../api-keys/service.js";
import { auditService } from "../audit/service.js";
import { projectNotFound, projectsService } from "../projects/service.js";
import { isValidApiKey } from "./api-keys.js";
import { invalidApiKey, invalidCredentials, notAuthenticated } from "./credential-errors.js";
import { anonymousScopes, type Role, scopesOfRole } from "./policy.js";
import { verifyAccessToken } from "./tokens.js";

// RFC 6750 §2.1: the scheme is case-insensitive, the token is one b64token.
export const bearerPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** A header's value, or undefined when it is absent or blank. */
function header(ctx: Context, name: string): string | undefined {
  const value = ctx.req?.headers[name];
  const text = Array.isArray(value) ? value.join(",") : value;
  return text?.trim() ? text.trim() : undefined;
}

/** The project a request asks to act in: the path's, for `/projects/{project_id}/…`; else `X-Project-Id`'s. */
async function askedProject(ctx: Context, meta: Meta, rawInput: () => Promise<unknown>): Promise<string | undefined> {
  if (!meta.projectInPath) return header(ctx, "x-project-id");
  const input = await rawInput();
  const id = (input as { project_id?: unknown } | undefined)?.project_id;
  // A path parameter that names no project can name no project the caller may act in.
  return typeof id === "string" ? id : "";
}

const keyActor = (id: string | null, label: string): Actor => ({ type: "api_key", id, label });

/**
 * A request that presents a key is judged by it, whatever AUTH_POLICY says:
 * a key of API_KEYS acts in the default project with every scope; a key made
 * through the API in its own project with its own scopes. Naming another
 * project is 404, as for a project that does not exist.
 */
async function keyPrincipal(ctx: Context, presented: string, asked: string | undefined): Promise<Principal> {
  if (ctx.config.apiKeys.length > 0 && isValidApiKey(presented, ctx.config.apiKeys)) {
    if (asked !== undefined && asked !== defaultProjectId) throw projectNotFound();
    const actor = keyActor(null, "API_KEYS");
    return { kind: "apiKey", projectId: defaultProjectId, scopes: scopesOfRole.admin, role: null, actor };
  }
  const key = await apiKeysService.authenticate(ctx.db, presented);
  if (!key) throw invalidApiKey();
  const principal: Principal = {
    kind: "apiKey",
    projectId: key.projectId,
    scopes: key.scopes,
    role: null,
    actor: keyActor(key.id, key.label),
  };
  if (asked !== undefined && asked !== key.projectId) {
    await denied(ctx, principal, { reason: "other_project" });
    throw projectNotFound();
  }
  return principal;
}

/**
 * A signed-in user acts in the project `X-Project-Id` (or the path) names,
 * else in the first they joined, with their role's scopes there; a project
 * they are not a member of is 404, as one that does not exist.
 */
async function userPrincipal(ctx: Context, authorization: string, asked: string | undefined): Promise<Principal> {
  const token = bearerPattern.exec(authorization)?.[1];
  const userId = token ? verifyAccessToken(token, ctx.config) : undefined;
  // A token is worth no more than its user: one deleted after issue makes it invalid.
  const membership = userId ? await projectsService.membership(ctx.db, userId, asked) : undefined;
  if (!membership) throw invalidCredentials();
  const { user, projectId, role } = membership;
  const actor: Actor = { type: "user", id: user.id, label: user.email };
  if (projectId === null || role === null) {
    // Signed in, acting nowhere: enough for what asks only for a user (creating a project, /protected).
    return { kind: "user", projectId: "", scopes: new Set(), role: null, user, actor };
  }
  return { kind: "user", projectId, scopes: scopesOfRole[role as Role], role: role as Role, user, actor };
}

/** No credentials: the default project, with what AUTH_POLICY grants. */
function anonymousPrincipal(ctx: Context, asked: string | undefined): Principal {
  const scopes = anonymousScopes[ctx.config.authPolicy];
  if (scopes.size === 0) throw notAuthenticated();
  if (asked !== undefined && asked !== defaultProjectId) throw projectNotFound();
  const actor: Actor = { type: "anonymous", id: null, label: null };
  return { kind: "anonymous", projectId: defaultProjectId, scopes, role: null, actor };
}

/** A credential refused for its scope, or for a project it cannot act in: recorded, at most once a minute. */
async function denied(ctx: Context, principal: Principal, details: Record<string, unknown>) {
  if (principal.kind === "anonymous" || principal.projectId === "") return;
  const acting = actingOf({ ...ctx, principal });
  await auditService
    .recordDenied(ctx.db, acting, `${principal.actor.type}:${principal.actor.id ?? "configured"}`, details)
    .catch((error: unknown) =>
      ctx.logger.warn({ request_id: ctx.requestId, err: error }, "could not record auth.denied"),
    );
}

const forbidden = (scope: string) =>
  new AppError("forbidden", `This credential lacks the scope ${scope}`, { required_scope: scope });

/**
 * Who is calling, and whether they may do what the operation asks
 * (docs/api/projects.md). Credentials that are present are always judged: a
 * bad bearer token is 401, a bad key 403. Without any, AUTH_POLICY decides.
 * A resource operation needs its meta's scope in the acting project: without
 * credentials 401, with them 403 naming the scope.
 */
export async function authorize(ctx: Context, meta: Meta, rawInput: () => Promise<unknown>): Promise<Principal> {
  const asked = await askedProject(ctx, meta, rawInput);
  const authorization = header(ctx, "authorization");
  if (meta.access === "user") {
    // Only a user's token: a key does not stand in for one.
    if (authorization === undefined) throw notAuthenticated();
    return userPrincipal(ctx, authorization, asked);
  }
  const apiKey = header(ctx, "x-api-key");
  let principal: Principal;
  if (apiKey !== undefined) {
    // A bearer token sent beside a key must be valid too; the key decides the project.
    if (authorization !== undefined) await userPrincipal(ctx, authorization, undefined);
    principal = await keyPrincipal(ctx, apiKey, asked);
  } else if (authorization !== undefined) {
    principal = await userPrincipal(ctx, authorization, asked);
  } else {
    principal = anonymousPrincipal(ctx, asked);
  }

  switch (meta.access) {
    case "caller":
      return principal;
    case "project": {
      if (principal.projectId === "") throw projectNotFound();
      const { scope, alsoScope } = meta;
      if (scope === undefined) throw new Error("A project operation names the scope it needs (meta.scope)");
      if (principal.scopes.has(scope)) return principal;
      if (alsoScope && principal.scopes.has(alsoScope.scope) && alsoScope.when(await rawInput())) return principal;
      if (principal.kind === "anonymous") throw notAuthenticated();
      await denied(ctx, principal, { required_scope: scope });
      throw forbidden(scope);
    }
    default:
      return principal;
  }
}
