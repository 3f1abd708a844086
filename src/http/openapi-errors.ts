// The error responses of SPEC §5 as OpenAPI components, shared by every operation.

const errorBody = (kind: string, example: Record<string, unknown>) => ({
  type: "object",
  required: ["error", "message"],
  properties: {
    error: { type: "string", description: "Machine-readable kind", example: kind },
    message: { type: "string" },
    details: { type: ["object", "null"], additionalProperties: true },
  },
  example,
});

const detailBody = (example: string) => ({
  type: "object",
  required: ["detail"],
  properties: { detail: { type: "string" } },
  example: { detail: example },
});

const schemas = {
  ValidationError: {
    ...errorBody("validation_error", {}),
    properties: {
      error: { type: "string", const: "validation_error" },
      message: { type: "string" },
      details: {
        type: "object",
        required: ["issues"],
        properties: {
          issues: {
            type: "array",
            items: {
              type: "object",
              required: ["field", "message"],
              properties: { field: { type: "string" }, message: { type: "string" } },
            },
          },
        },
      },
    },
    example: {
      error: "validation_error",
      message: "Request validation failed: name: must have at least 1 character",
      details: { issues: [{ field: "name", message: "must have at least 1 character" }] },
    },
  },
  Error: errorBody("conflict", {
    error: "conflict",
    message: "Cannot change status from stopped to running",
    details: { from: "stopped", to: "running", allowed: ["idle"] },
  }),
  Detail: detailBody("Agent not found"),
};

const json = (schema: string, example?: unknown) => ({
  "application/json": { schema: { $ref: `#/components/schemas/${schema}` }, ...(example ? { example } : {}) },
});
const retryAfter = { "Retry-After": { description: "Seconds to wait", schema: { type: "integer" } } };
const wwwAuthenticate = { "WWW-Authenticate": { schema: { type: "string", example: "Bearer" } } };

const responses: Record<number, [string, Record<string, unknown>]> = {
  400: ["ValidationError", { description: "Validation error", content: json("ValidationError") }],
  401: [
    "Unauthorized",
    {
      description: "Missing or invalid credentials",
      headers: wwwAuthenticate,
      content: {
        "application/json": {
          schema: { $ref: "#/components/schemas/Detail" },
          examples: {
            missing: { summary: "No credentials sent", value: { detail: "Not authenticated" } },
            invalid: { summary: "Bad or expired token", value: { detail: "Could not validate credentials" } },
          },
        },
      },
    },
  ],
  403: ["Forbidden", { description: "Invalid API key", content: json("Detail", { detail: "Invalid API key" }) }],
  404: ["NotFound", { description: "Not found", content: json("Detail", { detail: "Agent not found" }) }],
  409: ["Conflict", { description: "Conflict", content: json("Error") }],
  413: [
    "PayloadTooLarge",
    {
      description: "Request body too large",
      content: json("Error", { error: "payload_too_large", message: "Request body is too large" }),
    },
  ],
  415: [
    "UnsupportedMediaType",
    {
      description: "Request body is not JSON",
      content: json("Error", { error: "unsupported_media_type", message: "Request body must be application/json" }),
    },
  ],
  429: [
    "TooManyRequests",
    {
      description: "Rate limit hit",
      headers: retryAfter,
      content: json("Error", { error: "rate_limited", message: "Too many requests" }),
    },
  ],
  500: [
    "InternalError",
    {
      description: "Unexpected error",
      content: json("Error", { error: "internal_error", message: "An unexpected error occurred" }),
    },
  ],
  503: [
    "Unavailable",
    {
      description: "Overloaded or database unreachable",
      headers: retryAfter,
      content: json("Error", { error: "unavailable", message: "Service unavailable" }),
    },
  ],
};

export const errorResponseRefs = (statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => {
      const entry = responses[status];
      if (!entry) throw new Error(`No documented error response for status ${status}`);
      return [String(status), { $ref: `#/components/responses/${entry[0]}` }];
    }),
  );

const refersTo = (json: string, kind: "schemas" | "responses", name: string) =>
  json.includes(`"#/components/${kind}/${name}"`);

/**
 * The error responses and schemas that `paths` (serialised) refers to, added
 * to the existing components; the others are left out so the document holds
 * nothing unused.
 */
export function errorComponents(existing: { schemas?: object; responses?: object }, paths: string): object {
  const used = Object.fromEntries(Object.values(responses).filter(([name]) => refersTo(paths, "responses", name)));
  const referrers = paths + JSON.stringify(used) + JSON.stringify(existing.schemas ?? {});
  return {
    schemas: {
      ...existing.schemas,
      ...Object.fromEntries(Object.entries(schemas).filter(([name]) => refersTo(referrers, "schemas", name))),
    },
    responses: { ...existing.responses, ...used },
  };
}
