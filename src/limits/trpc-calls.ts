import type { IncomingMessage } from "node:http";

// tRPC decodes the path before splitting it, so an encoded comma separates calls too.
const separator = /,|%2c/gi;

/**
 * How many procedure calls a /trpc request makes, as tRPC counts them: a
 * batch (`?batch=1`) names its procedures separated by commas in the path,
 * and each is one request against the rate limit.
 */
export function trpcCalls(req: IncomingMessage): number {
  const url = req.url ?? "";
  const queryAt = url.indexOf("?");
  if (queryAt < 0 || new URLSearchParams(url.slice(queryAt + 1)).get("batch") !== "1") return 1;
  return 1 + (url.slice(0, queryAt).match(separator)?.length ?? 0);
}
