// The REST operations of the served /openapi.json, in the shape the fuzzer needs.
import type { OpenApiDocument } from "../../helpers/openapi-responses.js";

export type Schema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: Schema;
}

export interface Operation {
  method: string;
  /** The path template, e.g. `/agents/{agent_id}`. */
  path: string;
  parameters: Parameter[];
  body?: { contentType: string; schema: Schema; required: boolean };
  /** The documented success statuses (2xx, 3xx). */
  successes: number[];
}

export type ServedDocument = OpenApiDocument & {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: unknown; responses: object }>>;
  components: { schemas?: Record<string, Schema> };
};

const methods = ["get", "post", "put", "patch", "delete"];

export function operationsOf(document: ServedDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      const requestBody = operation.requestBody as
        | { required?: boolean; content: Record<string, { schema: Schema }> }
        | undefined;
      const [contentType, media] = Object.entries(requestBody?.content ?? {})[0] ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []).map((p) => ({ ...p, required: p.required ?? p.in === "path" })),
        body:
          contentType && media ? { contentType, schema: media.schema, required: !!requestBody?.required } : undefined,
        successes: Object.keys(operation.responses)
          .map(Number)
          .filter((status) => status >= 200 && status < 400),
      });
    }
  }
  return operations;
}

/** The methods a path answers, for the 405s of the others. */
export function methodsOf(document: ServedDocument, path: string): string[] {
  return methods.filter((m) => document.paths[path]?.[m]).map((m) => m.toUpperCase());
}

/** Follows a `#/components/schemas/…` reference. */
export function resolve(document: ServedDocument, schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== "string") return schema;
  const name = ref.replace("#/components/schemas/", "");
  const target = document.components.schemas?.[name];
  if (!target) throw new Error(`unresolved ${ref}`);
  return resolve(document, target);
}
