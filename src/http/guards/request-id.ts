import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../logger.js";

// A client's id is echoed only when it is short and plain, so it cannot
// inject anything into headers or logs.
const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's `X-Request-Id` if sane, else a new one. Set on the response at once. */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers["x-request-id"];
  const requestId = typeof incoming === "string" && saneRequestId.test(incoming) ? incoming : randomUUID();
  res.setHeader("X-Request-Id", requestId);
  return requestId;
}

/** The id `requestIdOf` set on the response, for handlers that did not receive it. */
export const requestIdSent = (res: ServerResponse | undefined) => String(res?.getHeader("X-Request-Id") ?? "unknown");

/**
 * One access-log line per request, written when the response is done. The
 * line carries the request id itself: no child logger per request.
 */
export function logAccess(
  logger: Logger,
  res: ServerResponse,
  requestId: string,
  method: string,
  path: string,
  level: "info" | "debug" = "info",
) {
  const started = performance.now();
  res.once("finish", () => {
    const duration = Math.round((performance.now() - started) * 100) / 100;
    logger[level]({ request_id: requestId, method, path, status: res.statusCode, duration_ms: duration }, "request");
  });
}
