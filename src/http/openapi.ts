import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import type { AppRouter } from "../routers/index.js";
import { errorComponents, errorResponseRefs } from "./openapi-errors.js";
import { procedureMetas } from "./procedure-metas.js";

type Operation = {
  operationId?: string;
  responses: Record<string, { description?: string; content?: unknown; headers?: Record<string, unknown> }>;
  requestBody?: unknown;
  security?: unknown;
};

export const securitySchemes = {
  bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A token from POST /token" },
  apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "A key from API_KEYS" },
  oauth2: { type: "oauth2", flows: { password: { tokenUrl: "token", scopes: {} } } },
} as const;

/**
 * The OpenAPI document, built once at start. trpc-to-openapi documents every
 * success as 200 and its own error shape; this rewrites each operation's
 * responses to the contract: its real success status and the real error bodies.
 */
export type ExtraPaths = Parameters<typeof generateOpenApiDocument>[1]["paths"];

export function buildOpenApiDocument(router: AppRouter, version: string, extraPaths: ExtraPaths = {}) {
  // trpc-to-openapi names an operation after its procedure path unless the meta names it.
  const metas = new Map(
    [...procedureMetas(router)].map(([path, meta]) => [meta.openapi?.operationId ?? path.replaceAll(".", "-"), meta]),
  );
  const document = generateOpenApiDocument(router as never, {
    title: "Agent Management API",
    description:
      "Register, run and watch agents. The same procedures are served as REST (here) and as typed tRPC at /trpc.",
    version,
    baseUrl: "/",
    securitySchemes: securitySchemes as never,
    paths: extraPaths,
  });

  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(pathItem as Record<string, Operation>)) {
      const meta = operation.operationId ? metas.get(operation.operationId) : undefined;
      // Versioned data routes have their own formats: http/versioning-openapi.ts documents them.
      if (!meta || meta.apiVersion) continue;
      const status = meta.successStatus ?? 200;
      const success = operation.responses["200"];
      const responses: Operation["responses"] = {};
      if (success && status === 204) responses["204"] = { description: "No content" };
      else if (success) responses[String(status)] = status === 201 ? withLocation(success) : success;
      const errorStatuses = new Set((meta.openapi?.errorResponses as number[] | undefined) ?? []);
      if (["post", "put", "patch"].includes(method)) for (const s of [400, 413, 415]) errorStatuses.add(s);
      errorStatuses.add(500);
      Object.assign(responses, errorResponseRefs([...errorStatuses].sort((a, b) => a - b)));
      operation.responses = responses;
      if (operation.security === undefined) delete operation.security;
    }
  }
  document.components = {
    ...document.components,
    ...errorComponents(document.components),
  } as OpenAPIObject["components"] & object;
  return document;
}

const withLocation = (response: Operation["responses"][string]) => ({
  ...response,
  description: "Created",
  headers: { Location: { description: "Path of the created resource", schema: { type: "string" } } },
});
