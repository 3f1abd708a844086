import { createHash } from "node:crypto";
import type { Request, Response } from "express";

/** `?a=1&b=2` as the client sent it, or "". */
export const queryStringOf = (req: Request) => {
  const index = req.originalUrl.indexOf("?");
  return index === -1 ? "" : req.originalUrl.slice(index);
};

/**
 * v1's deprecation headers once API_V1_SUNSET is set (SPEC §8.4); `successor`
 * is the v2 path of the same route, when v2 has one.
 */
export function markDeprecated(req: Request, res: Response, sunset: string, successor: string | undefined) {
  res.set("X-API-Deprecation", "true");
  res.set("X-API-Sunset", sunset);
  if (successor) res.set("Link", `<${successor}${queryStringOf(req)}>; rel="successor-version"`);
}

// A strong validator: any change of the body's bytes changes the tag.
const entityTag = (body: string) => `"${createHash("sha256").update(body).digest("base64url")}"`;

/** If-None-Match compares weakly (RFC 9110 §13.1.2): W/"x" matches "x". */
function matches(ifNoneMatch: string | undefined, tag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((candidate) => candidate.trim().replace(/^W\//, "") === tag);
}

/** Sends a JSON body; a cacheable one gets an ETag and Cache-Control, and 304 when the client has it. */
export function sendJson(req: Request, res: Response, status: number, body: unknown, cacheable: boolean) {
  const text = JSON.stringify(body);
  if (cacheable) {
    const tag = entityTag(text);
    res.set({ ETag: tag, "Cache-Control": "public, max-age=300" });
    if (matches(req.get("If-None-Match"), tag)) {
      res.status(304).end();
      return;
    }
  }
  res.status(status).type("application/json; charset=utf-8").send(text);
}
