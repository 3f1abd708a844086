import type { Config } from "../../config.js";
import type { Access } from "../../trpc/meta.js";

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
