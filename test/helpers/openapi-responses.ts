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
      record(seen);
    },
  };
  const record = (seen: ObservedResponse) => {
    observed.push(seen);
    problems.push(...check(seen));
  };
  return { middleware, observed, problems, record };
}

/** An id no resource has, and no project: what a refusal's path parameters are filled with. */
const unknownId = "5f0c6a8e-1d2b-4c3a-9e8f-7a6b5c4d3e2f";

/**
 * Sends each operation whose path matches `paths` the credentials it must
 * refuse, wherever the document says it does: a bad token (401), a bad key
 * (403) and a project the caller cannot act in (404). Each answer must be that
 * status, and is recorded by `recorder`.
 */
export async function sendRefusals(
  baseUrl: string,
  document: OpenApiDocument,
  recorder: ReturnType<typeof responseRecorder>,
  paths: RegExp,
) {
  const refusals = [
    [401, { authorization: "Bearer not-a-token" }],
    [403, { "x-api-key": "amk_000000000000_not-a-key-not-a-key-not-a-key-not-a-key-x" }],
    [404, { "x-project-id": "7c9e6679-7425-40de-944b-e07fc1f90ae7" }],
  ] as const;
  for (const [path, item] of Object.entries(document.paths)) {
    if (!paths.test(path)) continue;
    for (const [method, operation] of Object.entries(item)) {
      for (const [status, headers] of refusals) {
        if (!operation.responses[String(status)]) continue;
        const hasBody = ["post", "put", "patch"].includes(method);
        const answer = await fetch(`${baseUrl}${path.replace(/\{[^}]+\}/g, unknownId)}`, {
          method: method.toUpperCase(),
          headers: { ...headers, ...(hasBody ? { "content-type": "application/json" } : {}) },
          body: hasBody ? "{}" : undefined,
        });
        const body = await answer.text();
        expect(answer.status, `${method} ${path} with ${JSON.stringify(headers)}: ${body}`).toBe(status);
        const contentType = answer.headers.get("content-type");
        recorder.record({ method: method.toUpperCase(), path, status, contentType, body });
      }
    }
  }
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
