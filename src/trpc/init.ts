import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { authorize, type Principal, type UserPrincipal } from "../auth/authorize.js";
import type { Access } from "../auth/policy.js";
import { isDatabaseUnavailable } from "../db/index.js";
import { AppError } from "../errors.js";
import type { Context } from "./context.js";
import { trpcCodeFor } from "./error-codes.js";

export type ProcedureMeta = {
  /** Success status of the REST operation when it is not 200. */
  successStatus?: 201 | 204;
  /** Location header of a 201 response, from the created resource. */
  location?: (data: { id: string; agent_id?: string }) => string;
  /** Set by readProcedure/writeProcedure/userProcedure: what AUTH_POLICY asks of the operation. */
  access?: Access;
  /**
   * A versioned data route (SPEC §8): served over HTTP by http/versioning.ts,
   * with this version's formats, headers and caching, at its path and at the root.
   */
  apiVersion?: 1 | 2;
};

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta<ProcedureMeta>>()
  .create({
    errorFormatter({ shape, error }) {
      const appError = error.cause instanceof AppError ? error.cause : undefined;
      // Never hand a client the stack or a library's message of an unexpected error.
      if (error.code === "INTERNAL_SERVER_ERROR") {
        return { ...shape, message: "An unexpected error occurred", data: { ...shape.data, stack: undefined } };
      }
      return {
        ...shape,
        data: {
          ...shape.data,
          stack: undefined,
          error: appError?.kind,
          details: appError?.details,
        },
      };
    },
  });

const databaseUnavailable = () =>
  new AppError("unavailable", "The database is unavailable; retry shortly", undefined, { "Retry-After": "5" });

/**
 * Services throw AppError; give it the tRPC code that carries its HTTP status.
 * A database that cannot be reached becomes the same kind of error (503).
 */
const mapAppErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = isDatabaseUnavailable(result.error.cause) ? databaseUnavailable() : result.error.cause;
  if (cause instanceof AppError) {
    throw new TRPCError({ code: trpcCodeFor(cause.kind), message: cause.message, cause });
  }
  return result;
});

export const router = t.router;
export const publicProcedure = t.procedure.use(mapAppErrors);
export const createCallerFactory = t.createCallerFactory;

/**
 * AUTH_POLICY is enforced here and nowhere else. The same `access` goes into
 * the meta, from which the OpenAPI document derives each operation's security.
 */
function procedureWithAccess<A extends Access>(access: A) {
  return publicProcedure.meta({ access }).use(async ({ ctx, next }) => {
    // authorize returns a user principal whenever access is "user", or throws.
    const principal = (await authorize(ctx, access)) as A extends "user" ? UserPrincipal : Principal;
    return next({ ctx: { principal } });
  });
}

/** Agents and tasks reads: open unless AUTH_POLICY=all. */
export const readProcedure = procedureWithAccess("read");
/** Agents and tasks writes: open only under AUTH_POLICY=open. */
export const writeProcedure = procedureWithAccess("write");
/** Needs a bearer token of an existing user under every policy; ctx.principal.user is that user. */
export const userProcedure = procedureWithAccess("user");
