import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "../logger.js";
import { errorResponse, notFoundResponse } from "./error-response.js";

export interface Route {
  method: string;
  path: string;
}

// Same matching rules as the REST adapter: case-insensitive, trailing slash ignored.
const patternOf = (path: string) => new RegExp(`^${path.replace(/\/$/, "").replace(/\{[^}]+\}/g, "[^/]+")}/?$`, "i");

/** Finds which methods a path answers to, from the list of routes. */
export function routeMatcher(routes: Route[]) {
  const byPath = new Map<string, Set<string>>();
  for (const { method, path } of routes) {
    const methods = byPath.get(path) ?? new Set<string>();
    methods.add(method.toUpperCase());
    byPath.set(path, methods);
  }
  const table = [...byPath].map(([path, methods]) => ({ pattern: patternOf(path), methods: [...methods] }));
  return (path: string): string[] | undefined => table.find(({ pattern }) => pattern.test(path))?.methods;
}

/**
 * Runs after every route: a known path with another method is 405 with
 * `Allow`; anything else is 404.
 */
export function notFoundOrMethodNotAllowed(routes: Route[]): RequestHandler {
  const methodsOf = routeMatcher(routes);
  return (req, res) => {
    const methods = methodsOf(req.path);
    if (methods) {
      res.status(405).set("Allow", methods.join(", ")).json({ detail: "Method Not Allowed" });
      return;
    }
    res.status(404).json(notFoundResponse().body);
  };
}

/** Errors that reach express (body parsing, plain routes) get the contract's bodies too. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, _req, res, _next) => {
    const { status, headers, body } = errorResponse(error);
    if (status === 500) (res.locals.log ?? logger).error({ err: error }, "unexpected error");
    if (res.headersSent) return res.end();
    res.status(status).set(headers).json(body);
  };
}
