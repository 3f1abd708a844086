import type { IncomingMessage } from "node:http";
import type { Config } from "../config.js";
import type { Database } from "../db/index.js";
import type { KeptAnswer } from "../idempotency/kept-answer.js";
import { clientAddress } from "../limits/client-address.js";
import type { Logger } from "../logger.js";
import { type Acting, type Actor, defaultProjectId } from "../resources/acting.js";
import type { Access, Meta, Scope } from "./meta.js";

export type { Access };

/**
 * Who is calling, once the procedure's access check ran (anonymous, in the
 * default project with no scope, before it, and where none is needed).
 */
export interface Principal {
  kind: "anonymous" | "apiKey" | "user";
  /** The acting project ("" for a signed-in user who is a member of none). */
  projectId: string;
  /** What the credential may do there. */
  scopes: ReadonlySet<Scope>;
  /** A user's role in the acting project. */
  role: "admin" | "member" | "viewer" | null;
  user?: { id: string; email: string };
  /** As the audit log names the caller. */
  actor: Actor;
}

const nobody: Principal = {
  kind: "anonymous",
  projectId: defaultProjectId,
  scopes: new Set(),
  role: null,
  actor: { type: "anonymous", id: null, label: null },
};

/**
 * Who is calling, as the auth module (src/modules/auth/) judges it: the app
 * wires it in, so the procedure builders need no domain of their own.
 */
export interface Authenticator {
  /** The principal, judged against what the operation asks (its meta); throws 401, 403 or 404. */
  authorize(ctx: Context, meta: Meta, rawInput: () => Promise<unknown>): Promise<Principal>;
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
    principal: nobody,
    requester: () => {
      requester ??= req ? deps.auth.requesterOf(req) : "internal";
      return requester;
    },
  };
}

/** Who acts and where, for services: the principal's project and actor, the request's id and client address. */
export const actingOf = (ctx: Context): Acting => ({
  projectId: ctx.principal.projectId,
  actor: ctx.principal.actor,
  requestId: ctx.req ? ctx.requestId : null,
  clientAddress: ctx.req ? clientAddress(ctx.req, ctx.config.trustProxy) : null,
});
