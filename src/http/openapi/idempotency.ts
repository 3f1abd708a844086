import { errorResponseRefs } from "./errors.js";

type Operation = {
  parameters?: object[];
  responses: Record<string, { description?: string; headers?: Record<string, unknown> } | { $ref: string }>;
};

const idempotencyKey = {
  in: "header",
  name: "Idempotency-Key",
  required: false,
  description:
    "1–255 printable ASCII characters, unique per request you mean to make once. The first request with a key runs " +
    "and its response is kept (IDEMPOTENCY_TTL_HOURS, default 24); the same request again gets that response with " +
    "Idempotent-Replayed: true; another request with the key is 422; one while the first still runs is 409 with " +
    "Retry-After: 1. Responses of 500 and above are not kept. A malformed key is 400.",
  // No example: Swagger UI would fill it in and send it with every "Try it out".
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" },
};

const replayed = {
  description: "true when this is the kept response of an earlier request with the same Idempotency-Key",
  schema: { type: "string", enum: ["true"] },
};

/** A creating operation as REST serves it (docs/http.md): Idempotency-Key, its replay header, 409 and 422. */
export function documentIdempotent(operation: Operation): void {
  operation.parameters = [...(operation.parameters ?? []), idempotencyKey];
  const responses = operation.responses;
  for (const [status, response] of Object.entries(responses)) {
    if (status.startsWith("2") && !("$ref" in response)) {
      response.headers = { ...response.headers, "Idempotent-Replayed": replayed };
    }
  }
  Object.assign(responses, errorResponseRefs([409, 422]));
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}
