import type { IncomingMessage } from "node:http";
import type { Config } from "../config.js";
import type { Database } from "../db/index.js";
import type { KeyInStatement } from "../idempotency/in-statement.js";
import type { Logger } from "../logger.js";
import type { Principal } from "../modules/auth/authorize.js";

/** What every procedure may use; built once per app, extended per request. */
export interface AppDeps {
  db: Database;
  config: Config;
  logger: Logger;
  /** Aborted when the process begins to shut down: long polls and streams end early. */
  shutdown: AbortSignal;
}

export interface Context extends AppDeps {
  /** The request's id, on its log lines. */
  requestId: string;
  req?: IncomingMessage;
  /** Who is calling, once the procedure's access check ran (anonymous before, and where none is needed). */
  principal: Principal;
  /** REST only: the versions `If-Match` accepts (SPEC §13.2); undefined when it is absent or `*`. */
  ifMatch?: readonly number[];
  /** An Idempotency-Key the procedure's creating statement keeps (meta `keyInStatement`, PostgreSQL). */
  keyInStatement?: KeyInStatement;
  /** Set by a list procedure: over REST its page's next cursor and total become `Link` and `X-Total-Count`. */
  page?: PageHeaders;
}

export interface PageHeaders {
  next: string | null;
  total?: number;
}

/**
 * A procedure's context, one per request or internal call. Written out field
 * by field, never spread from `deps`: this runs on every request.
 */
export function createContext(deps: AppDeps, req?: IncomingMessage, requestId = "internal"): Context {
  return {
    db: deps.db,
    config: deps.config,
    logger: deps.logger,
    shutdown: deps.shutdown,
    requestId,
    req,
    principal: { kind: "anonymous" },
  };
}
