import type { IncomingMessage } from "node:http";
import type { Config } from "../config.js";
import type { Database } from "../db/index.js";
import type { KeptAnswer } from "../idempotency/kept-answer.js";
import type { Logger } from "../logger.js";
import type { Access } from "./meta.js";

export type { Access };

/** Who is calling, once the procedure's access check ran (anonymous before, and where none is needed). */
export type Principal =
  | { kind: "anonymous" }
  | { kind: "apiKey" }
  | { kind: "user"; user: { id: string; email: string } };

/**
 * Who is calling, as the auth module (src/modules/auth/) judges it: the app
 * wires it in, so the procedure builders need no domain of their own.
 */
export interface Authenticator {
  /** The principal, judged against what the operation accepts under AUTH_POLICY; throws 401 or 403. */
  authorize(ctx: Context, access: Access): Promise<Principal>;
  /**
   * Whom the request counts against (rate limits, Idempotency-Key senders):
   * the user or the key its credentials prove, else its client address.
   * Judged from the credentials alone, reading no database.
   */
  requesterOf(req: IncomingMessage): string;
}

/** What the service runs on: the app is made of these (createApp). */
export interface ServiceDeps {
  db: Database;
  config: Config;
  logger: Logger;
  /** Aborted when the process begins to shut down: long polls and streams end early. */
  shutdown: AbortSignal;
}

/** What every procedure may use; built once per app, extended per request. */
export interface AppDeps extends ServiceDeps {
  auth: Authenticator;
}

export interface Context extends AppDeps {
  /** The request's id, on its log lines. */
  requestId: string;
  req?: IncomingMessage;
  /** Who is calling, once the procedure's access check ran (anonymous before, and where none is needed). */
  principal: Principal;
  /** Whom the request counts against (Authenticator.requesterOf), read once and only when needed. */
  requester: () => string;
  /** REST only: the versions `If-Match` accepts; undefined when it is absent or `*`. */
  ifMatch?: readonly number[];
  /** A creation's Idempotency-Key, whose answer its service keeps with its write (src/idempotency/). */
  answer?: KeptAnswer;
}

/**
 * A procedure's context, one per request or internal call. Written out field
 * by field, never spread from `deps`: this runs on every request.
 */
export function createContext(deps: AppDeps, req?: IncomingMessage, requestId = "internal"): Context {
  let requester: string | undefined;
  return {
    db: deps.db,
    config: deps.config,
    logger: deps.logger,
    shutdown: deps.shutdown,
    auth: deps.auth,
    requestId,
    req,
    principal: { kind: "anonymous" },
    requester: () => {
      requester ??= req ? deps.auth.requesterOf(req) : "internal";
      return requester;
    },
  };
}
