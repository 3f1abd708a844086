import { initTRPC } from "@trpc/server";
import type { TRPCErrorShape } from "@trpc/server/rpc";
import type { OpenApiMeta } from "trpc-to-openapi";
import { type ErrorDetails, type ErrorKind, internalErrorMessage } from "../errors.js";
import { appErrorOf, trpcErrorOf } from "../http/error-responses.js";
import { idempotency } from "../idempotency/middleware.js";
import { authorize } from "../modules/auth/authorize.js";
import { notAuthenticated } from "../modules/auth/credential-errors.js";
import type { Access } from "../modules/auth/policy.js";
import type { Context } from "./context.js";

/** What the REST dispatcher (http/rest/) reads from a procedure besides its `openapi` meta. */
export type ProcedureMeta = {
  /** Success status of the REST operation when it is not 200. */
  successStatus?: 201 | 204;
  /** Location header of a 201 response, from the created resource. */
  location?: (data: { id: string; agent_id?: string }) => string;
  /**
   * A second success that the result chooses instead of `successStatus`
   * when `when(data, input)` holds, documented beside it: 202 (same body:
   * accepted, not done yet) or 204 (no body; the procedure returns null).
   */
  otherSuccess?: { status: 202 | 204; description: string; when: (data: unknown, input: unknown) => boolean };
  /**
   * More headers of a REST success, from the procedure's result: an `ETag`
   * from a version, `X-Total-Count`, a `Link` to the next page … (meta is
   * typed for the whole router, so the function narrows `data` and `input` itself).
   */
  responseHeaders?: (data: unknown, input: unknown) => Record<string, string>;
  /**
   * The result is a versioned resource (SPEC §13.2): REST answers with
   * `ETag: "<version>"`, a GET with a matching `If-None-Match` is 304, and
   * PUT/PATCH/DELETE read `If-Match` (http/rest/conditional.ts).
   */
  versioned?: true;
  /** A list served by pages (SPEC §13.3): its 200 documents `Link` and `X-Total-Count`, its metadata filter `metadata[key]`. */
  listHeaders?: true;
  /**
   * `"sse"`: the procedure (a GET) returns an async iterable of
   * `ServerSentEvent`, which REST writes as `text/event-stream` until it ends
   * or the client leaves; the procedure's `signal` aborts when the client leaves.
   */
  stream?: "sse";
  /**
   * The procedure may wait a long time for something to happen (a lease's
   * `wait_seconds`): over REST it holds no request slot while it waits, and
   * counts against MAX_LONG_POLLS instead.
   */
  longPoll?: true;
  /** The document's media type object for a `stream: "sse"` success (`text/event-stream`). */
  streamContent?: Record<string, unknown>;
  /**
   * The procedure's answers never hold a secret, so the copy kept for an
   * Idempotency-Key (SPEC §13.1) is stored as it is rather than sealed
   * (src/idempotency/middleware.ts): sealing is for answers such as a
   * webhook's creation, which holds its signing secret.
   */
  keptInClear?: true;
  /**
   * The procedure's writes are one short transaction that waits for nothing
   * but the database, so the response kept for an Idempotency-Key is written
   * in that same transaction (src/idempotency/middleware.ts): one commit
   * instead of three. A second request with the key, sent while the first
   * runs, waits for it and gets its response replayed instead of 409.
   */
  keyInTransaction?: true;
  /**
   * On PostgreSQL the procedure's one creating statement also keeps the
   * response for an Idempotency-Key (ctx.keyInStatement, which it passes to
   * its service: src/idempotency/in-statement.ts); on SQLite
   * `keyInTransaction` applies.
   */
  keyInStatement?: true;
  /** Set by readProcedure/writeProcedure/userProcedure: what AUTH_POLICY asks of the operation. */
  access?: Access;
  /**
   * A versioned data route (SPEC §8): served over HTTP by the data module's
   * dispatch plug-in (data/dispatch.ts), with this version's formats,
   * headers and caching, at its path and at the root.
   */
  apiVersion?: 1 | 2;
};

/**
 * `error.data` of every tRPC error, one type on the client: the tRPC code and
 * HTTP status, and the same `error` kind and `details` as the REST body
 * (SPEC §14.3): `e.data?.details?.issues` lists a validation error's fields.
 */
export interface ErrorData {
  code: string;
  httpStatus: number;
  path?: string;
  error: ErrorKind;
  details?: ErrorDetails;
}

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta<ProcedureMeta>>()
  .create({
    errorFormatter({ shape, error }): TRPCErrorShape<ErrorData> {
      const appError = appErrorOf(error);
      return {
        code: shape.code,
        // Readable text, never a serialized list of issues, a stack or a library's words.
        message: appError.kind === "internal_error" ? internalErrorMessage : appError.message,
        data: {
          code: shape.data.code,
          httpStatus: shape.data.httpStatus,
          path: shape.data.path,
          error: appError.kind,
          details: appError.details,
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * The error a procedure leaves with: a TRPCError whose code carries the
 * catalogue's status, with the AppError as its cause. An unexpected error is
 * left as it is, so its cause reaches the log.
 */
function transportError(error: unknown): unknown {
  const appError = appErrorOf(error);
  return appError.kind === "internal_error" ? error : trpcErrorOf(appError);
}

/**
 * The one middleware of every procedure: AUTH_POLICY is enforced here and
 * nowhere else (the same `access` goes into the meta, from which the document
 * derives each operation's security), and whatever the procedure throws
 * leaves as `transportError` says. The principal is recorded on the request's
 * context rather than spread into a new one: this runs on every call.
 */
function guardedProcedure(access?: Access) {
  return (access ? t.procedure.meta({ access }) : t.procedure).use(async ({ ctx, next }) => {
    try {
      if (access) ctx.principal = await authorize(ctx, access);
    } catch (error) {
      throw transportError(error);
    }
    const result = await next();
    if (!result.ok) {
      const error = transportError(result.error);
      if (error !== result.error) throw error;
    }
    return result;
  });
}

/** No credentials under any policy: the versioned data groups. */
export const publicProcedure = guardedProcedure();
/** Agents and tasks reads: open unless AUTH_POLICY=all. */
export const readProcedure = guardedProcedure("read");
/**
 * Agents and tasks writes: open only under AUTH_POLICY=open. A creating one
 * honours Idempotency-Key, once the sender is known.
 */
export const writeProcedure = guardedProcedure("write").use(
  (opts) => idempotency(opts) as ReturnType<typeof opts.next>,
);
/** Needs a bearer token of an existing user under every policy; ctx.principal.user is that user. */
export const userProcedure = guardedProcedure("user").use(({ ctx, next }) => {
  // authorize returned a user principal, or threw: this only tells the type system.
  if (ctx.principal.kind !== "user") throw notAuthenticated();
  return next({ ctx: { principal: ctx.principal } });
});
