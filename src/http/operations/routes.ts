import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Registry } from "prom-client";
import { AppError, methodNotAllowed } from "../../errors.js";
import { registry } from "../../metrics/registry.js";
import type { AppDeps } from "../../trpc/context.js";
import { sendJson, sendRestError } from "../respond.js";
import { countGauges } from "./count-gauges.js";
import { readiness } from "./readiness.js";

/** The operations paths: answered before admission, the rate limit and the access log at info. */
export const operationsPaths = ["/livez", "/readyz", "/metrics"] as const;

// Probes and metrics describe this moment: nobody may cache them.
const noStore = { "Cache-Control": "no-store" };

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
function hasToken(req: IncomingMessage, token: string): boolean {
  const presented = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
  return presented !== undefined && timingSafeEqual(digest(presented), digest(token));
}

/**
 * GET /livez, /readyz and /metrics (docs/operations.md). Returns the handler for a
 * path, or undefined when the path is not one of them.
 */
export function operationsRoutes(deps: AppDeps) {
  const counts = countGauges(deps.db);
  const token = deps.config.metricsToken;

  const routes: Record<(typeof operationsPaths)[number], (req: IncomingMessage, res: ServerResponse) => Promise<void>> =
    {
      async "/livez"(_req, res) {
        sendJson(res, 200, { status: "ok" }, noStore);
      },
      async "/readyz"(_req, res) {
        const { ready, body } = await readiness(deps.db, deps.shutdown.aborted);
        sendJson(res, ready ? 200 : 503, body, ready ? noStore : { ...noStore, "Retry-After": "5" });
      },
      async "/metrics"(req, res) {
        if (token !== undefined && !hasToken(req, token)) {
          const message = req.headers.authorization ? "Could not validate credentials" : "Not authenticated";
          sendRestError(res, new AppError("unauthenticated", message, undefined, { "WWW-Authenticate": "Bearer" }));
          return;
        }
        const merged = Registry.merge([registry, counts]);
        const text = await merged.metrics();
        res.writeHead(200, {
          ...noStore,
          "Content-Type": merged.contentType,
          "Content-Length": Buffer.byteLength(text),
        });
        res.end(text);
      },
    };

  return (path: string): ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined => {
    const route = routes[path as keyof typeof routes];
    if (!route) return undefined;
    return async (req, res) => {
      if (req.method !== "GET" && req.method !== "HEAD") {
        sendRestError(res, methodNotAllowed(["GET", "HEAD"]));
        return;
      }
      await route(req, res);
    };
  };
}
