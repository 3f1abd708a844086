import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import type { Middleware } from "openapi-fetch";
import { expect } from "vitest";
import type { TestApp } from "./app.js";

type Schema = Record<string, unknown>;
type ResponseObject = { $ref?: string; content?: Record<string, { schema?: Schema }> };
export type OpenApiDocument = {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { schemas?: Record<string, Schema>; responses?: Record<string, ResponseObject> };
};

export interface ObservedResponse {
  method: string;
  /** The path template of the operation, e.g. `/agents/{agent_id}`. */
  path: string;
  status: number;
  contentType: string | null;
  /** The raw body text. */
  body: string;
}

/**
 * Checks real responses against an OpenAPI 3.1 document: the status must be
 * documented for the operation, and the body must match that response's
 * schema (JSON Schema 2020-12, `$ref`s resolved into the document's
 * components). Returns the problems found, none when the response agrees.
 */
export function responseChecker(document: OpenApiDocument) {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  // OpenAPI's `example` annotates schemas; `components` carries the $ref targets.
  ajv.addVocabulary(["example", "components"]);
  formats.default(ajv);
  const validators = new Map<string, ValidateFunction>();

  const documented = (method: string, path: string, status: number): ResponseObject | undefined => {
    const response = document.paths[path]?.[method.toLowerCase()]?.responses[String(status)];
    const name = response?.$ref?.replace("#/components/responses/", "");
    return name ? document.components.responses?.[name] : response;
  };

  const validatorFor = (key: string, schema: Schema) => {
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile({ ...schema, components: { schemas: document.components.schemas ?? {} } });
      validators.set(key, validate);
    }
    return validate;
  };

  return (observed: ObservedResponse): string[] => {
    const { method, path, status, contentType, body } = observed;
    const operation = `${method.toUpperCase()} ${path} → ${status}`;
    const response = documented(method, path, status);
    if (!response) return [`${operation}: status not documented`];
    const schema = response.content?.["application/json"]?.schema;
    if (!schema) return body === "" ? [] : [`${operation}: documented without a body, got ${JSON.stringify(body)}`];
    if (!contentType?.startsWith("application/json")) return [`${operation}: content type ${contentType}, not JSON`];
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return [`${operation}: body is not JSON: ${JSON.stringify(body)}`];
    }
    const validate = validatorFor(operation, schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${operation}: body${e.instancePath} ${e.message} (${e.schemaPath})`);
  };
}

/**
 * An openapi-fetch middleware that checks every response a client receives
 * against the document: `problems` holds what disagreed (for the test that
 * met it to fail), `observed` every response seen (for a test that every
 * documented status was met).
 */
export function responseRecorder(document: OpenApiDocument) {
  const check = responseChecker(document);
  const observed: ObservedResponse[] = [];
  const problems: string[] = [];
  const middleware: Middleware = {
    async onResponse({ request, response, schemaPath }) {
      const seen = {
        method: request.method,
        path: schemaPath,
        status: response.status,
        contentType: response.headers.get("content-type"),
        body: await response.clone().text(),
      };
      observed.push(seen);
      problems.push(...check(seen));
    },
  };
  return { middleware, observed, problems };
}

/**
 * For tests that send their own requests: a function that reads a response's
 * body and expects it documented for the operation at `template` by the
 * document `app` serves. Returns the body read.
 */
export async function documentedBy(app: TestApp) {
  const check = responseChecker((await (await app.request("/openapi.json")).json()) as OpenApiDocument);
  return async (res: Response, method: string, template: string): Promise<string> => {
    const body = await res.text();
    const contentType = res.headers.get("content-type");
    expect(check({ method, path: template, status: res.status, contentType, body })).toEqual([]);
    return body;
  };
}
