import type { Request, Response } from "express";
import type { Config } from "../config.js";
import type { Database } from "../db/index.js";
import type { Logger } from "../logger.js";

/** What every procedure may use; built once per app, extended per request. */
export interface AppDeps {
  db: Database;
  config: Config;
  logger: Logger;
}

export interface Context extends AppDeps {
  log: Logger;
  req?: Request;
  res?: Response;
}

/** A context without HTTP, for tests and internal callers. */
export function createContextInner(deps: AppDeps, extra: Partial<Context> = {}): Context {
  return { ...deps, log: deps.logger, ...extra };
}

/** The request-bound context shared by the REST and tRPC adapters. */
export function contextFactory(deps: AppDeps) {
  return ({ req, res }: { req: Request; res: Response }): Context =>
    createContextInner(deps, { req, res, log: res.locals.log ?? deps.logger });
}
