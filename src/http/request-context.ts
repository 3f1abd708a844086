import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import type { Logger } from "../logger.js";

// A client's id is echoed only when it is short and plain, so it cannot
// inject anything into headers or logs.
const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the client's, if sane), a logger that carries it,
 * one access-log line when the response is done, and a charset on JSON.
 */
export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers["x-request-id"];
    const requestId = typeof incoming === "string" && saneRequestId.test(incoming) ? incoming : randomUUID();
    const log = logger.child({ request_id: requestId });
    res.locals.log = log;
    res.setHeader("X-Request-Id", requestId);

    // Adapters write a bare `application/json`; the contract names the charset.
    const setHeader = res.setHeader.bind(res);
    res.setHeader = (name, value) =>
      setHeader(
        name,
        name.toLowerCase() === "content-type" && value === "application/json"
          ? "application/json; charset=utf-8"
          : value,
      );

    const started = performance.now();
    res.on("finish", () => {
      log.info(
        {
          method: req.method,
          path: req.originalUrl.split("?")[0],
          status: res.statusCode,
          duration_ms: Math.round((performance.now() - started) * 100) / 100,
        },
        "request",
      );
    });
    next();
  };
}
