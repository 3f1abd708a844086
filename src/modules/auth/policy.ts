import type { Config } from "../../config.js";

/**
 * What a procedure is, as far as AUTH_POLICY goes: `read` and `write` are the
 * agents and tasks operations, `user` needs a signed-in user whatever the policy.
 */
export type Access = "read" | "write" | "user";

/** Credentials a request can carry: `Authorization: Bearer <jwt>` or `X-API-Key`. */
export type Credential = "bearer" | "apiKey";

/**
 * The credentials an operation accepts under the running policy; an empty list
 * means it needs none. Both the middleware and the OpenAPI document read this.
 */
export function acceptedCredentials(access: Access | undefined, policy: Config["authPolicy"]): Credential[] {
  if (access === "user") return ["bearer"];
  if (access === "write" && policy !== "open") return ["bearer", "apiKey"];
  if (access === "read" && policy === "all") return ["bearer", "apiKey"];
  return [];
}
