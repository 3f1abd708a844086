import { createHash } from "node:crypto";
import type { Context } from "../trpc/context.js";

const digest = (text: string) => createHash("sha256").update(text).digest("base64url");

/**
 * Whose keys a request's key is among (SPEC §13.1: keys of different senders
 * never collide): the signed-in user, the API key (stored as a digest, never
 * in clear), or, for a request that needs no credentials, the client address.
 */
export function senderOf(ctx: Context): string {
  const { principal } = ctx;
  if (principal.kind === "user") return `user:${principal.user.id}`;
  const apiKey = ctx.req?.headers["x-api-key"];
  if (principal.kind === "apiKey" && typeof apiKey === "string") return `key:${digest(apiKey)}`;
  return `address:${ctx.req?.socket.remoteAddress ?? "internal"}`;
}
