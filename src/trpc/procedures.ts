import { initTRPC } from "@trpc/server";
import type { TRPCErrorShape } from "@trpc/server/rpc";
import type { OpenApiMeta } from "trpc-to-openapi";
import {
  AppError,
  appErrorOf,
  type ErrorDetails,
  type ErrorKind,
  internalErrorMessage,
  trpcErrorOf,
} from "../errors.js";
import { idempotent } from "../idempotency/idempotent.js";
import { idempotencyKeyOf } from "../idempotency/key.js";
import type { Context } from "./context.js";
import { type Access, creates, type Meta, type ProcedureMeta, successOf } from "./meta.js";

export type { Access, ProcedureMeta } from "./meta.js";

/**
 * `error.data` of every tRPC error, one type on the client: the tRPC code and
 * HTTP status, and the same `error` kind and `details` as the REST body
 * (docs/errors.md): `e.data?.details?.issues` lists a validation error's fields.
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
 * The one middleware of every procedure: who may call it is decided here and
 * nowhere else (the same `access` and `scope` go into the meta, from which
 * the document derives each operation's security), and whatever the
 * procedure throws leaves as `transportError` says. The principal is
 * recorded on the request's context rather than spread into a new one: this
 * runs on every call.
 */
function guardedProcedure(access?: Access) {
  return (access ? t.procedure.meta({ access }) : t.procedure).use(async ({ ctx, meta, getRawInput, next }) => {
    try {
      if (access) ctx.principal = await ctx.auth.authorize(ctx, meta as Meta, getRawInput);
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

/** No credentials under any policy, no project: the versioned data groups. */
export const publicProcedure = guardedProcedure();

/**
 * A creating mutation honours Idempotency-Key (src/idempotency/), its keys
 * the acting project's and its caller's own; its service keeps the answer
 * with its write, through `ctx.answer`.
 */
const honoursIdempotencyKey = t.middleware(async ({ ctx, meta, path, type, getRawInput, next }) => {
  if (type !== "mutation" || !creates(meta) || !ctx.req) return next();
  const key = idempotencyKeyOf(ctx.req.headers["idempotency-key"]);
  if (key === undefined) return next();
  const keyedMeta = meta as Meta;
  const input = await getRawInput();
  const { kind, actor } = ctx.principal;
  const keyHolder = kind === "apiKey" && actor.type === "api_key" ? actor.id : null;
  const result = await idempotent({
    db: ctx.db,
    config: ctx.config,
    logger: ctx.logger,
    requestId: ctx.requestId,
    key,
    // A key made through the API has keys of its own, whatever address it is sent from.
    requester: `${ctx.principal.projectId} ${keyHolder ? `key:${keyHolder}` : ctx.requester()}`,
    operation: path,
    input,
    mode: keyedMeta.idempotency ?? "claim-first",
    sealed: !keyedMeta.keptInClear,
    success: (data) => successOf(keyedMeta, data, input),
    run: (answer) => next({ ctx: { answer } }),
  });
  // tRPC's middleware result, as `next()` gave it or as the kept answer made it.
  return result as Awaited<ReturnType<typeof next>>;
});

/** A resource of the acting project: its meta names the scope it needs (`scope`). */
export const projectProcedure = guardedProcedure("project").use(honoursIdempotencyKey);

/** Any caller AUTH_POLICY lets through, in the project they act in; the procedure judges the rest (the projects list). */
export const callerProcedure = guardedProcedure("caller").use(honoursIdempotencyKey);

/** A signed-in user (a bearer token) under every policy; ctx.principal.user is that user. */
export const userProcedure = guardedProcedure("user").use(({ ctx, next }) => {
  const { user } = ctx.principal;
  // authorize returned a user's principal, or threw: this only tells the type system.
  if (!user) throw trpcErrorOf(new AppError("unauthenticated", "Not authenticated"));
  return next({ ctx: { principal: { ...ctx.principal, user } } });
});
