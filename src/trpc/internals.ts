import { type AnyTRPCProcedure, type AnyTRPCRouter, getTRPCErrorFromUnknown, type TRPCError } from "@trpc/server";
import type { Context } from "./context.js";
import type { Meta } from "./meta.js";

/*
 * The one place that reads what tRPC's public types leave out of a built
 * router: each procedure's `_def` (its middlewares, resolver last; its input
 * parsers; its meta and type) and the options tRPC passes a middleware.
 * test/library-internals.test.ts fails, saying what to re-check here, when an
 * upgrade of @trpc/server changes any of it.
 */

/** What one of a procedure's middlewares returns (tRPC's MiddlewareResult, loosely typed). */
type MiddlewareResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };
/** What tRPC passes to `next()`: a context to merge, an input to replace, a raw-input reader. */
type NextOptions = { ctx?: object; input?: unknown; getRawInput?: () => Promise<unknown> } | undefined;
type Middleware = (opts: {
  ctx: Context;
  type: string;
  path: string;
  input: unknown;
  getRawInput: () => Promise<unknown>;
  meta: unknown;
  signal: AbortSignal | undefined;
  batchIndex: number;
  next: (options?: NextOptions) => Promise<MiddlewareResult>;
}) => Promise<MiddlewareResult>;

type Definition = { middlewares: Middleware[]; inputs: unknown[]; meta?: unknown; type: string };

/** A procedure of a router, as the REST table and the document read it. */
export interface ProcedureParts {
  /** The dotted path, e.g. `agents.get`. */
  path: string;
  type: "query" | "mutation" | "subscription";
  meta: Meta;
  /** The input parsers given with `.input()`, in order (zod schemas here). */
  inputs: unknown[];
  /** Runs the procedure with all its middlewares (access, validation, errors), as a tRPC call would. */
  invoke: (ctx: Context, input: unknown, signal?: AbortSignal) => Promise<unknown>;
}

/**
 * Calls a procedure as tRPC's own call does (`callRecursive` in
 * @trpc/server): each middleware of the procedure in turn, the last one its
 * resolver; an error thrown by one becomes the failed result its caller
 * sees; a `next({ ctx })` merges into the context. The difference is
 * cost: tRPC copies its call options twice per middleware through a
 * property-by-property spread helper, which was an eighth of the CPU of a
 * `GET /agents/{id}` (`_objectSpread2` in the profile); here each step is one
 * object literal. This also skips the caller's proxy and trpc-to-openapi's
 * handler (which builds a fetch Request per call and cannot route a dot
 * segment safely), and keeps every middleware.
 */
function invoker(definition: Definition, path: string): ProcedureParts["invoke"] {
  const { middlewares, meta, type } = definition;
  const step = async (
    index: number,
    ctx: Context,
    input: unknown,
    getRawInput: () => Promise<unknown>,
    signal: AbortSignal | undefined,
  ): Promise<MiddlewareResult> => {
    try {
      const middleware = middlewares[index];
      if (!middleware) throw new Error(`${path}: its resolver called next()`);
      return await middleware({
        ctx,
        type,
        path,
        input,
        getRawInput,
        meta,
        signal,
        batchIndex: 0,
        next: (options) =>
          step(
            index + 1,
            options?.ctx ? { ...ctx, ...options.ctx } : ctx,
            options && "input" in options ? options.input : input,
            options?.getRawInput ?? getRawInput,
            signal,
          ),
      });
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause) };
    }
  };
  return async (ctx, input, signal) => {
    const result = await step(0, ctx, undefined, () => Promise.resolve(input), signal);
    if (!result.ok) throw result.error;
    return result.data;
  };
}

/** Every procedure of `router`, with what tRPC's types do not show; read once, at start. */
export function proceduresOf(router: AnyTRPCRouter): ProcedureParts[] {
  const procedures = router._def.procedures as Record<string, AnyTRPCProcedure>;
  return Object.entries(procedures).map(([path, procedure]) => {
    const definition = procedure._def as unknown as Definition;
    if (!Array.isArray(definition.middlewares) || !Array.isArray(definition.inputs)) {
      throw new Error(`${path}: @trpc/server no longer keeps middlewares and inputs in _def (src/trpc/internals.ts)`);
    }
    return {
      path,
      type: procedure._def.type,
      meta: (definition.meta ?? {}) as Meta,
      inputs: definition.inputs,
      invoke: invoker(definition, path),
    };
  });
}

/** Every procedure's meta by its dotted path (`agents.create`). */
export const procedureMetas = (router: AnyTRPCRouter): Map<string, Meta> =>
  new Map(proceduresOf(router).map((procedure) => [procedure.path, procedure.meta]));
