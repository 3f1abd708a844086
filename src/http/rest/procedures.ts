import type { AnyTRPCProcedure, AnyTRPCRouter } from "@trpc/server";
import type { OpenApiMeta, OpenApiMethod } from "trpc-to-openapi";
import { z } from "zod";
import type { Context } from "../../trpc/context.js";
import type { ProcedureMeta } from "../../trpc/init.js";
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

/**
 * Calls a procedure the way tRPC's own adapters do: the procedure is a
 * function of its call options. This skips the caller's proxy and
 * trpc-to-openapi's handler (which builds a fetch Request per call and
 * cannot route a dot segment safely), and keeps every middleware.
 */
function invoker(procedure: AnyTRPCProcedure, path: string): ProcedureRoute["invoke"] {
  const call = procedure as unknown as (opts: {
    ctx: Context;
    getRawInput: () => Promise<unknown>;
    path: string;
    type: "query" | "mutation" | "subscription";
    signal: AbortSignal | undefined;
    batchIndex: number;
  }) => Promise<unknown>;
  const type = procedure._def.type;
  return (ctx, input, signal) =>
    call({ ctx, getRawInput: () => Promise.resolve(input), path, type, signal, batchIndex: 0 });
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
