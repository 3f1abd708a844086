import type { ServerResponse } from "node:http";
import type { AppError } from "../errors.js";
import { appErrorOf } from "../errors.js";
import type { Logger } from "../logger.js";
import { restError } from "./error-responses.js";
import { sampleError } from "./error-sampling.js";

/** Headers a response is written with; `X-Request-Id` is already on the response. */
export type Headers = Record<string, string>;

const json = "application/json; charset=utf-8";

/** Writes `text` (JSON already) with its length; HEAD gets the same headers and no body (node drops it). */
export function sendJsonText(res: ServerResponse, status: number, text: string, headers?: Headers): void {
  res.writeHead(status, { ...headers, "Content-Type": json, "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

export const sendJson = (res: ServerResponse, status: number, body: unknown, headers?: Headers) =>
  sendJsonText(res, status, JSON.stringify(body), headers);

/** A response with no body and no Content-Type: 204, 301, 304. */
export function sendEmpty(res: ServerResponse, status: number, headers?: Headers): void {
  res.writeHead(status, headers);
  res.end();
}

/**
 * The error as the AppError it stands for, logged with its cause (one line,
 * its stack within) when it was unexpected; the client only ever sees the
 * catalogue's text for it. Errors a client caused are not logged here: the
 * request's access line, at info, carries their status.
 */
export function reportedError(error: unknown, log: Logger, requestId: string): AppError {
  const appError = appErrorOf(error);
  if (appError.kind !== "internal_error") return appError;
  const { log: logIt, suppressed } = sampleError(error);
  if (logIt) {
    const extra = suppressed > 0 ? { similar_suppressed: suppressed } : {};
    log.error({ request_id: requestId, err: error, ...extra }, "unexpected error");
  }
  return appError;
}

/** Any error as docs/errors.md's response. */
export function sendRestError(res: ServerResponse, error: AppError, extraHeaders?: Headers): void {
  const { status, headers, body } = restError(error);
  sendJson(res, status, body, extraHeaders ? { ...extraHeaders, ...headers } : headers);
}
