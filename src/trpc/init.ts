import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { AppError } from "../errors.js";
import type { Context } from "./context.js";
import { trpcCodeFor } from "./error-codes.js";

export type ProcedureMeta = {
  /** Success status of the REST operation when it is not 200. */
  successStatus?: 201 | 204;
  /** Location header of a 201 response, from the created resource. */
  location?: (data: { id: string; agent_id?: string }) => string;
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

/** Services throw AppError; give it the tRPC code that carries its HTTP status. */
const mapAppErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof AppError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: trpcCodeFor(cause.kind), message: cause.message, cause });
  }
  return result;
});

export const router = t.router;
export const publicProcedure = t.procedure.use(mapAppErrors);
export const createCallerFactory = t.createCallerFactory;
