import { type ErrorKind, errorCatalogue, errorKinds, internalErrorMessage } from "../../errors.js";

// The error responses of docs/errors.md as OpenAPI components, one per row of the
// error catalogue (src/errors.ts): its status, name, description, headers
// and body shape come from there; only the examples are written here.

const issueList = {
  type: "array",
  items: {
    type: "object",
    required: ["field", "message"],
    properties: { field: { type: "string" }, message: { type: "string" } },
  },
};

// No schema is named after a JavaScript or DOM global (`Error`): generated clients would shadow it.
const schemas = {
  ValidationError: {
    type: "object",
    required: ["error", "message", "details"],
    properties: {
      error: { type: "string", const: "validation_error" },
      message: { type: "string" },
      details: { type: "object", required: ["issues"], properties: { issues: issueList } },
    },
    example: {
      error: "validation_error",
      message: "Request validation failed: name: must have at least 1 character",
      details: { issues: [{ field: "name", message: "must have at least 1 character" }] },
    },
  },
  ErrorBody: {
    type: "object",
    required: ["error", "message"],
    properties: {
      error: { type: "string", description: "Machine-readable kind", enum: errorKinds },
      message: { type: "string" },
      details: { type: ["object", "null"], additionalProperties: true },
    },
    example: {
      error: "conflict",
      message: "Cannot change status from stopped to running",
      details: { from: "stopped", to: "running", allowed: ["idle"] },
    },
  },
  Detail: {
    type: "object",
    required: ["detail"],
    properties: { detail: { type: "string" } },
    example: { detail: "Agent not found" },
  },
};

const headerSchemas: Record<string, object> = {
  "Retry-After": { description: "Seconds to wait", schema: { type: "integer" } },
  "WWW-Authenticate": { schema: { type: "string", example: "Bearer" } },
  ETag: { description: "The resource's current version", schema: { type: "string", example: '"3"' } },
  Allow: { description: "The methods the path answers", schema: { type: "string", example: "GET, POST" } },
};

type Example = { summary: string; value: object };

// Named examples; a kind with none shows its schema's example.
const examples: Record<ErrorKind, Record<string, Example>> = {
  validation_error: {},
  unauthenticated: {
    missing: { summary: "No credentials sent", value: { detail: "Not authenticated" } },
    invalid: { summary: "Bad or expired token", value: { detail: "Could not validate credentials" } },
  },
  forbidden: {
    scope: {
      summary: "The credential lacks the scope",
      value: {
        error: "forbidden",
        message: "This credential lacks the scope tasks:write",
        details: { required_scope: "tasks:write" },
      },
    },
  },
  invalid_api_key: {
    invalid: { summary: "Unknown, revoked or expired API key", value: { detail: "Invalid API key" } },
  },
  not_found: {
    agent: { summary: "No such agent", value: { detail: "Agent not found" } },
    task: { summary: "No such task under this agent", value: { detail: "Task not found" } },
    lease: {
      summary: "The lease is gone (expired, released, its task ended)",
      value: { detail: "Lease not found" },
    },
  },
  method_not_allowed: { method: { summary: "Another method", value: { detail: "Method Not Allowed" } } },
  request_timeout: {
    timeout: {
      summary: "The head or body did not arrive in time",
      value: { error: "request_timeout", message: "The request did not arrive in time" },
    },
  },
  conflict: {
    inFlight: {
      summary: "The first request with this Idempotency-Key is still running (Retry-After: 1)",
      value: {
        error: "conflict",
        message: "A request with this Idempotency-Key is still being processed; retry shortly",
      },
    },
    transition: {
      summary: "A status change the lifecycle forbids",
      value: {
        error: "conflict",
        message: "Cannot change status from stopped to running",
        details: { from: "stopped", to: "running", allowed: ["idle"] },
      },
    },
    agentNotRunning: {
      summary: "Only a running agent gets work",
      value: {
        error: "conflict",
        message: "Agent is paused: only a running agent gets work",
        details: { agent_status: "paused" },
      },
    },
    leaseRequired: {
      summary: "A leased task's status changed without its lease_id",
      value: {
        error: "conflict",
        message: "The task is leased: only its worker changes its status, with its lease_id",
        details: { lease: "required" },
      },
    },
    leaseLost: {
      summary: "A lease_id that is no longer the task's",
      value: {
        error: "conflict",
        message: "This lease is no longer the task's: it expired, was released, or the task ended or was leased again",
        details: { lease: "lost" },
      },
    },
  },
  precondition_failed: {
    version: {
      summary: "If-Match names another version",
      value: {
        error: "precondition_failed",
        message: "Agent is at version 3, not a version the request names",
        details: { current_version: 3 },
      },
    },
  },
  payload_too_large: {
    body: {
      summary: "Body over BODY_LIMIT",
      value: { error: "payload_too_large", message: "Request body is too large" },
    },
  },
  unsupported_media_type: {
    json: {
      summary: "Not JSON",
      value: { error: "unsupported_media_type", message: "Request body must be application/json" },
    },
  },
  idempotency_key_reused: {
    reused: {
      summary: "The key was used for another request",
      value: {
        error: "idempotency_key_reused",
        message: "This Idempotency-Key was used for a different request; use a new key for a new request",
      },
    },
  },
  headers_too_large: {
    head: {
      summary: "A URL or headers over the limit",
      value: { error: "headers_too_large", message: "The request line and headers are over 16384 bytes" },
    },
  },
  rate_limited: {
    limit: { summary: "Too many requests", value: { error: "rate_limited", message: "Too many requests" } },
  },
  internal_error: {
    unexpected: { summary: "Unexpected error", value: { error: "internal_error", message: internalErrorMessage } },
  },
  unavailable: {
    overloaded: {
      summary: "Overloaded",
      value: { error: "unavailable", message: "The service is overloaded; retry shortly" },
    },
    database: {
      summary: "Database unreachable",
      value: { error: "unavailable", message: "The database is unavailable; retry shortly" },
    },
  },
};

const schemaOf = (kind: ErrorKind) =>
  kind === "validation_error" ? "ValidationError" : errorCatalogue[kind].body === "detail" ? "Detail" : "ErrorBody";

/** The kinds that answer with each status (403: a missing scope, or an invalid key), in the catalogue's order. */
const kindsOfStatus = new Map<number, ErrorKind[]>();
for (const kind of errorKinds) {
  const { status } = errorCatalogue[kind];
  kindsOfStatus.set(status, [...(kindsOfStatus.get(status) ?? []), kind]);
}

/** The response of a status: its kinds' bodies (one of them, when several share it), examples and headers. */
function responseOf(kinds: ErrorKind[]) {
  const bodies = [...new Set(kinds.map(schemaOf))].map((name) => ({ $ref: `#/components/schemas/${name}` }));
  const media: Record<string, unknown> = { schema: bodies.length === 1 ? bodies[0] : { oneOf: bodies } };
  const named = Object.fromEntries(kinds.flatMap((kind) => Object.entries(examples[kind])));
  const values = Object.values(named);
  if (values.length === 1) media.example = values[0]?.value;
  else if (values.length > 1) media.examples = named;
  const headers = [
    ...new Set(
      kinds.flatMap((kind) => {
        const { response } = errorCatalogue[kind];
        return "headers" in response ? [...response.headers] : [];
      }),
    ),
  ];
  return {
    description: kinds.map((kind) => errorCatalogue[kind].response.description).join("; or "),
    ...(headers.length > 0 ? { headers: Object.fromEntries(headers.map((name) => [name, headerSchemas[name]])) } : {}),
    content: { "application/json": media },
  };
}

const kindOfStatus = new Map<number, ErrorKind>(
  [...kindsOfStatus].map(([status, kinds]) => [status, kinds[0] as ErrorKind]),
);

/** `$ref`s to the error responses of these statuses, for an operation's `responses`. */
export const errorResponseRefs = (statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => {
      const kind = kindOfStatus.get(status);
      if (!kind) throw new Error(`No error kind answers with status ${status}`);
      return [String(status), { $ref: `#/components/responses/${errorCatalogue[kind].response.name}` }];
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
  const used = Object.fromEntries(
    [...kindsOfStatus.values()]
      .map((kinds) => [errorCatalogue[kinds[0] as ErrorKind].response.name, kinds] as const)
      .filter(([name]) => refersTo(paths, "responses", name))
      .map(([name, kinds]) => [name, responseOf(kinds)]),
  );
  const referrers = paths + JSON.stringify(used) + JSON.stringify(existing.schemas ?? {});
  return {
    schemas: {
      ...existing.schemas,
      ...Object.fromEntries(Object.entries(schemas).filter(([name]) => refersTo(referrers, "schemas", name))),
    },
    responses: { ...existing.responses, ...used },
  };
}
