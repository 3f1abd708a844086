import type { AnyTRPCRouter } from "@trpc/server";
import type { OpenApiMethod } from "trpc-to-openapi";
import { z } from "zod";
import type { Context } from "../../trpc/context.js";
import { proceduresOf } from "../../trpc/internals.js";
import type { Meta } from "../../trpc/meta.js";
import { type InputReader, inputReader } from "./input.js";

export type { Meta };

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

/** The one object schema of a procedure's input, or undefined when it takes none. */
function inputSchemaOf(inputs: unknown[], where: string): z.ZodObject | undefined {
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
  for (const { path, type, meta, inputs, invoke } of proceduresOf(router)) {
    if (!meta.openapi || meta.openapi.enabled === false || type === "subscription") continue;
    const { method, path: template } = meta.openapi;
    const where = `${method} ${template} (${path})`;
    routes.push({
      method,
      path: template,
      procedure: path,
      meta,
      readInput: inputReader(method, template, inputSchemaOf(inputs, where), bodyLimit, where),
      invoke,
    });
  }
  return routes;
}
