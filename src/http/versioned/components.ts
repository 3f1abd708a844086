import { errorCatalogue, errorKinds, internalErrorMessage } from "../../errors.js";

// OpenAPI components of the versioned data groups (docs/api/data.md): their error
// formats, caching and deprecation headers, the health check and redirects.

const ref = (kind: "schemas" | "responses" | "headers", name: string) => ({ $ref: `#/components/${kind}/${name}` });
const json = (schema: string, example: unknown) => ({
  "application/json": { schema: ref("schemas", schema), example },
});

const schemas = {
  V1Error: {
    type: "object",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["code", "message", "details"],
        properties: {
          code: {
            type: "string",
            enum: [...new Set([...errorKinds.map((kind) => errorCatalogue[kind].v1), "UNSUPPORTED_VERSION"])],
          },
          message: { type: "string" },
          details: {
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
  },
  V2Error: { type: "object", required: ["error"], properties: { error: { type: "string" } } },
  HealthOk: {
    type: "object",
    required: ["status", "database", "version", "uptime_s"],
    properties: {
      status: { type: "string", const: "ok" },
      database: { type: "string", const: "ok" },
      version: { type: "string", description: "The service's package version" },
      uptime_s: { type: "integer", description: "Seconds since the process started" },
    },
    example: { status: "ok", database: "ok", version: "0.1.0", uptime_s: 42 },
  },
  HealthUnavailable: {
    type: "object",
    required: ["status", "database"],
    properties: { status: { type: "string", const: "unavailable" }, database: { type: "string" } },
  },
};

const cacheAndVersionHeaders = {
  ETag: { description: "Strong validator of the body; send it back in If-None-Match", schema: { type: "string" } },
  CacheControl: { schema: { type: "string", example: "public, max-age=300" } },
  ApiVersion: { description: "The version that answered", schema: { type: "string", enum: ["1", "2"] } },
  Vary: { description: "At the root, the format depends on X-API-Version", schema: { type: "string" } },
};

const deprecationHeaders = {
  Deprecation: { description: "v1 is deprecated", schema: { type: "string", const: "true" } },
  Sunset: { description: "The date v1 will be removed", schema: { type: "string" } },
  SuccessorLink: {
    description: 'The same route in v2: `</v2/…>; rel="successor-version"`',
    schema: { type: "string" },
  },
};

const v1Validation = {
  error: {
    code: "VALIDATION_ERROR",
    message: "month must be a month in YYYY-MM format",
    details: [{ field: "month", message: "must be a month in YYYY-MM format" }],
  },
};
const v1Unsupported = {
  error: {
    code: "UNSUPPORTED_VERSION",
    message: 'API version "3" is not supported: use 1 or 2',
    details: [{ field: "X-API-Version", message: "must be 1 or 2" }],
  },
};
const internal = internalErrorMessage;
const overloaded = "The service is overloaded; retry shortly";
const retryAfter = { "Retry-After": { description: "Seconds to wait", schema: { type: "integer" } } };

const responses = {
  NotModified: {
    description: "The client's copy (If-None-Match) is current; no body",
    headers: { ETag: ref("headers", "ETag"), "Cache-Control": ref("headers", "CacheControl") },
  },
  V1BadRequest: { description: "Invalid parameter (v1 format)", content: json("V1Error", v1Validation) },
  V2BadRequest: {
    description: "Invalid or missing parameter (v2 format)",
    content: json("V2Error", { error: "month parameter required" }),
  },
  RootBadRequest: {
    description: "Invalid parameter, in the selected version's format; or an unsupported X-API-Version (v1 format)",
    content: {
      "application/json": {
        schema: { oneOf: [ref("schemas", "V1Error"), ref("schemas", "V2Error")] },
        examples: { validation: { value: v1Validation }, unsupportedVersion: { value: v1Unsupported } },
      },
    },
  },
  V1NotFound: {
    description: "No data at all",
    content: json("V1Error", {
      error: { code: "NOT_FOUND", message: "Car registration data not found", details: [] },
    }),
  },
  V1InternalError: {
    description: "Unexpected error (v1 format)",
    content: json("V1Error", { error: { code: "INTERNAL_ERROR", message: internal, details: [] } }),
  },
  V2InternalError: { description: "Unexpected error (v2 format)", content: json("V2Error", { error: internal }) },
  V1Unavailable: {
    description: "Overloaded or database unreachable (v1 format)",
    headers: retryAfter,
    content: json("V1Error", { error: { code: "SERVICE_UNAVAILABLE", message: overloaded, details: [] } }),
  },
  V2Unavailable: {
    description: "Overloaded or database unreachable (v2 format)",
    headers: retryAfter,
    content: json("V2Error", { error: overloaded }),
  },
  HealthUnavailable: {
    description: "The database does not answer",
    headers: retryAfter,
    content: json("HealthUnavailable", { status: "unavailable", database: "unreachable" }),
  },
};

/** The deprecation headers exist only once v1 has a sunset date. */
export const versionedComponents = (v1Deprecated: boolean) => ({
  schemas,
  headers: v1Deprecated ? { ...cacheAndVersionHeaders, ...deprecationHeaders } : cacheAndVersionHeaders,
  responses,
});
export { ref };
