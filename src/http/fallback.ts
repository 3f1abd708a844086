import type { ErrorRequestHandler, RequestHandler } from "express";
import { methodNotAllowed, notFound } from "../errors.js";
import type { Logger } from "../logger.js";
import { requestIdSent } from "./guards/request-id.js";
import { reportedError, sendRestError } from "./respond.js";

export interface Route {
  method: string;
  path: string;
}

/**
 * Runs after every express route (the REST routes never get here: the
 * dispatcher answers their 404 and 405): a known path with another method is
 * 405 with `Allow`; anything else is 404.
 */
export function notFoundOrMethodNotAllowed(routes: Route[]): RequestHandler {
  const methodsOf = new Map<string, string[]>();
  for (const { method, path } of routes) methodsOf.set(path, [...(methodsOf.get(path) ?? []), method]);
  return (req, res) => {
    const methods = methodsOf.get(req.path.length > 1 ? req.path.replace(/\/$/, "") : req.path);
    sendRestError(res, methods ? methodNotAllowed(methods) : notFound());
  };
}

/** Errors that reach express (a docs asset that cannot be read, …) get the contract's bodies too. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, _req, res, _next) => {
    const appError = reportedError(error, logger, requestIdSent(res));
    if (res.headersSent) return res.end();
    sendRestError(res, appError);
  };
}
