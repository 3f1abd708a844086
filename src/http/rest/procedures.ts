import { type AnyTRPCProcedure, type AnyTRPCRouter, getTRPCErrorFromUnknown, type TRPCError } from "@trpc/server";
import type { OpenApiMeta, OpenApiMethod } from "trpc-to-openapi";
import { z } from "zod";
import type { Context } from "../../trpc/context.js";
import type { ProcedureMeta } from "../../trpc/procedures.js";
import { type InputReader, inputReader } from "./input.js";

export type Meta = OpenApiMeta<ProcedureMeta>;

/** A procedure served at a REST path, as the dispatcher needs it. */
export interface ProcedureRoute {
  method: OpenApiMethod;
  /** The path template, e.g. `/agents/{agent_id}`. */
  path: `/${string}`;
  /** The procedure's dotted path, e.g. `agents.get`. */
  procedure: string;
  meta: Meta;
  /** The procedure's input from the request: path parameters, query or JSON body. */
  readInput: InputReader;
  /** Runs the procedure with its middlewares (access, validation, errors), as a tRPC call would. */
  invoke: (ctx: Context, input: unknown, signal?: AbortSignal) => Promise<unknown>;
}

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
function invoker(procedure: AnyTRPCProcedure, path: string): ProcedureRoute["invoke"] {
  // A built procedure's definition holds its middlewares, resolver last; tRPC's types leave them out.
  const { middlewares, meta, type } = procedure._def as typeof procedure._def & { middlewares: Middleware[] };
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

/** The one object schema of a procedure's input, or undefined when it takes none. */
function inputSchemaOf(procedure: AnyTRPCProcedure, where: string): z.ZodObject | undefined {
  const inputs = procedure._def.inputs as unknown[];
  if (inputs.length === 0) return undefined;
  const [schema] = inputs;
  if (inputs.length > 1 || !(schema instanceof z.ZodObject)) {
    throw new Error(`${where}: a REST procedure takes one z.object() input`);
  }
  return schema;
}

/** Every procedure of `router` that has an OpenAPI path, compiled once at start. */
export function procedureRoutes(router: AnyTRPCRouter, bodyLimit: number): ProcedureRoute[] {
  const routes: ProcedureRoute[] = [];
  const procedures = router._def.procedures as Record<string, AnyTRPCProcedure>;
  for (const [path, procedure] of Object.entries(procedures)) {
    const meta = (procedure._def.meta ?? {}) as Meta;
    if (!meta.openapi || meta.openapi.enabled === false || procedure._def.type === "subscription") continue;
    const { method, path: template } = meta.openapi;
    const where = `${method} ${template} (${path})`;
    routes.push({
      method,
      path: template,
      procedure: path,
      meta,
      readInput: inputReader(method, template, inputSchemaOf(procedure, where), bodyLimit, where),
      invoke: invoker(procedure, path),
    });
  }
  return routes;
}
