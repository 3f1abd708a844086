import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { type FieldIssue, fieldIssues, notFound, validationError } from "../../errors.js";
import { readJsonObject } from "../body.js";
import { compileCoercion } from "./coerce.js";
import { parseParameters } from "./query.js";

/** What a REST request gives a procedure's input. */
export interface RestInputSource {
  req: IncomingMessage;
  /** Path parameters by name, decoded. */
  params: Record<string, string>;
  /** The raw query string, without `?`. */
  query: string;
}

export type InputReader = (source: RestInputSource) => Promise<Record<string, unknown> | undefined>;

const takesBody = (method: string) => method === "POST" || method === "PUT" || method === "PATCH";

const paramNames = (template: string) => [...template.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1] as string);

/**
 * How one route builds its procedure's input, as trpc-to-openapi documents
 * it: path parameters, plus the JSON body (POST, PUT, PATCH) or the query
 * parameters (the others); a path parameter wins over a body field of the
 * same name. A bodyless method never reads the body. Compiled once at start.
 */
export function inputReader(
  method: string,
  template: string,
  schema: z.ZodObject | undefined,
  bodyLimit: number,
  where: string,
): InputReader {
  if (!schema) return () => Promise.resolve(undefined);
  const shape = schema.shape as Record<string, z.core.$ZodType>;
  const pathNames = paramNames(template);
  const queryNames = takesBody(method) ? [] : Object.keys(shape).filter((name) => !pathNames.includes(name));
  const coercePath = compileCoercion(shape, pathNames, where);
  const coerceQuery = compileCoercion(shape, queryNames, where);
  const order = Object.keys(shape);

  /**
   * Parameters that could not be read are reported together with what the
   * schema says of the others, in the schema's order, as one 400.
   */
  function refuse(input: Record<string, unknown>, issues: FieldIssue[]): never {
    const failed = new Set(issues.map((issue) => issue.field));
    const parsed = schema?.safeParse(input);
    const others = parsed?.success ? [] : fieldIssues(parsed?.error.issues ?? []);
    const all = [...issues, ...others.filter((issue) => !failed.has(issue.field.split(".")[0] as string))];
    all.sort((a, b) => order.indexOf(a.field) - order.indexOf(b.field));
    throw validationError(all);
  }

  return async ({ req, params, query }) => {
    const issues: FieldIssue[] = [];
    // A route without query parameters ignores its query string, as any route ignores unknown
    // parameters: even a malformed one (`?%`) cannot name a parameter the route takes.
    const input = takesBody(method)
      ? await readJsonObject(req, bodyLimit)
      : coerceQuery(query === "" || queryNames.length === 0 ? {} : parseParameters(query), issues);
    if (pathNames.length > 0) {
      const pathIssues: FieldIssue[] = [];
      const values = coercePath(params, pathIssues);
      // A path that names nothing this route can hold matches no resource (docs/http.md).
      if (pathIssues.length > 0) throw notFound();
      for (const name of pathNames) input[name] = values[name];
    }
    if (issues.length > 0) refuse(input, issues);
    return input;
  };
}
