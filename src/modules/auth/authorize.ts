import type { Access, Context, Principal } from "../../trpc/context.js";
import { isValidApiKey } from "./api-keys.js";
import { invalidApiKey, invalidCredentials, notAuthenticated } from "./credential-errors.js";
import { acceptedCredentials } from "./policy.js";
import { verifyAccessToken } from "./tokens.js";
import { type AuthUser, usersService } from "./users.js";

const anonymous: Principal = { kind: "anonymous" };

// RFC 6750 §2.1: the scheme is case-insensitive, the token is one b64token.
export const bearerPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** A header's value, or undefined when it is absent or blank. */
function header(ctx: Context, name: string): string | undefined {
  const value = ctx.req?.headers[name];
  const text = Array.isArray(value) ? value.join(",") : value;
  return text?.trim() ? text : undefined;
}

async function userFromAuthorization(ctx: Context, authorization: string): Promise<AuthUser> {
  const token = bearerPattern.exec(authorization)?.[1];
  const userId = token ? verifyAccessToken(token, ctx.config) : undefined;
  // A token is worth no more than its user: one deleted after issue makes it invalid.
  const user = userId ? await usersService.findById(ctx.db, userId) : null;
  if (!user) throw invalidCredentials();
  return user;
}

/**
 * Who is calling, judged against what the operation accepts under AUTH_POLICY.
 * Where an operation needs no credentials none are read, so what the OpenAPI
 * document shows is exactly what happens. Where it needs them, every accepted
 * credential that is present must be valid: a bad bearer token is 401 and a
 * bad API key 403 even when the other credential is good; none at all is 401.
 */
export async function authorize(ctx: Context, access: Access): Promise<Principal> {
  const accepted = acceptedCredentials(access, ctx.config.authPolicy);
  if (accepted.length === 0) return anonymous;

  const authorization = header(ctx, "authorization");
  const apiKey = accepted.includes("apiKey") ? header(ctx, "x-api-key") : undefined;
  if (authorization === undefined && apiKey === undefined) throw notAuthenticated();

  if (apiKey !== undefined && !isValidApiKey(apiKey, ctx.config.apiKeys)) throw invalidApiKey();
  if (authorization !== undefined) return { kind: "user", user: await userFromAuthorization(ctx, authorization) };
  return { kind: "apiKey" };
}
