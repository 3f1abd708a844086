import { randomUUID } from "node:crypto";
import { maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { AppError, validationError } from "../errors.js";
import type { Logger } from "../logger.js";
import { restError, trpcErrorBody } from "./error-responses.js";
import { requestTarget } from "./guards/request-target.js";
import { isTrpcPath } from "./trpc-path.js";

/** How long a connection is still read from after its refusal, at most. */
const lingerMs = 5000;

type ClientError = Error & { code?: string; rawPacket?: Buffer };

/**
 * Requests Node's HTTP parser refuses before any route sees them — a request
 * line and headers over the header size limit (16 KiB by default: a long
 * `input=` on /trpc), bytes that are not HTTP/1.1, a head or body that did
 * not arrive in time — answered in the service's format instead of Node's
 * bare status line: a JSON error body (tRPC's envelope on /trpc) with
 * `X-Request-Id`, and one access-log line.
 *
 * The connection is then closed gently: the answer, then the end of our
 * side, and what the client still sends is read and dropped until it stops
 * (at most `lingerMs`). Closing with unread bytes makes the kernel reset the
 * connection, and a client still sending a long URL would see the reset
 * (ECONNRESET) instead of the answer.
 */
export function answerClientErrors(server: Server, logger: Logger) {
  const answered = new WeakSet<Socket>();
  server.on("clientError", (error: ClientError, socket: Socket) => {
    // The parser fails again on every chunk that follows the first error: one answer is enough.
    if (answered.has(socket)) return;
    answered.add(socket);
    // Node's own handler checks the same field: a response already started cannot be followed by another.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
    if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    // Express rewrites req.url below a mount point (/trpc/x is /x inside /trpc): originalUrl keeps the target.
    const target = (inFlight?.req as { originalUrl?: string } | undefined)?.originalUrl ?? inFlight?.req.url;
    const line = inFlight ? { method: inFlight.req.method, target } : requestLine(error.rawPacket);
    const path = line?.target === undefined ? undefined : requestTarget(line.target)?.path;
    const requestId = String(inFlight?.getHeader("X-Request-Id") ?? randomUUID());
    const appError = appErrorOf(error);
    const status = appError.status;
    logger.info({ request_id: requestId, method: line?.method, path, status, parse_error: error.code }, "request");
    const body = JSON.stringify(path && isTrpcPath(path) ? trpcErrorBody(appError) : restError(appError).body);
    socket.end(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
        `X-Request-Id: ${requestId}`,
        "Content-Type: application/json; charset=utf-8",
        `Content-Length: ${Buffer.byteLength(body)}`,
        "X-Content-Type-Options: nosniff",
        "Referrer-Policy: no-referrer",
        "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'",
        `Date: ${new Date().toUTCString()}`,
        "Connection: close",
        "",
        body,
      ].join("\r\n"),
    );
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
    socket.resume();
  });
}

function appErrorOf(error: ClientError): AppError {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      // Node's limit (--max-http-header-size): the service does not set its own.
      return new AppError("headers_too_large", `The request line and headers are over ${maxHeaderSize} bytes`);
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return new AppError("payload_too_large", "The chunk extensions of the body are over the size limit");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new AppError("request_timeout", "The request did not arrive in time");
    default:
      return validationError([{ field: "request", message: "is not a well-formed HTTP/1.1 request" }]);
  }
}

/**
 * The method and target of the request line the refused bytes start with, as
 * far as they hold it; undefined when they start elsewhere (a head that came
 * in several reads: its route, and so the format of the answer, is unknown).
 */
function requestLine(packet: Buffer | undefined): { method: string; target: string } | undefined {
  const match = packet && /^([A-Z]+) (\S+)/.exec(packet.subarray(0, 8192).toString("latin1"));
  return match ? { method: match[1] as string, target: match[2] as string } : undefined;
}
