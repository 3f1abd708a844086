import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendEmpty, sendJsonText } from "../respond.js";

/** `?a=1&b=2` as the client sent it, or "". */
export const queryStringOf = (query: string) => (query === "" ? "" : `?${query}`);

/**
 * v1's deprecation headers once API_V1_SUNSET is set (docs/api/data.md); `successor`
 * is the v2 path of the same route, when v2 has one.
 */
export function markDeprecated(res: ServerResponse, sunset: string, successor: string | undefined, query: string) {
  res.setHeader("X-API-Deprecation", "true");
  res.setHeader("X-API-Sunset", sunset);
  if (successor) res.setHeader("Link", `<${successor}${queryStringOf(query)}>; rel="successor-version"`);
}

// A strong validator: any change of the body's bytes changes the tag.
const entityTag = (body: string) => `"${createHash("sha256").update(body).digest("base64url")}"`;

/** If-None-Match compares weakly (RFC 9110 §13.1.2): W/"x" matches "x". */
function matches(ifNoneMatch: string | undefined, tag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((candidate) => candidate.trim().replace(/^W\//, "") === tag);
}

/** Sends a cacheable JSON body with an ETag and Cache-Control, or 304 when the client has it. */
export function sendCacheable(req: IncomingMessage, res: ServerResponse, body: unknown) {
  const text = JSON.stringify(body);
  const tag = entityTag(text);
  const headers = { ETag: tag, "Cache-Control": "public, max-age=300" };
  if (matches(req.headers["if-none-match"], tag)) return sendEmpty(res, 304, headers);
  sendJsonText(res, 200, text, headers);
}
