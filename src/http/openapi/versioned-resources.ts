import { errorResponseRefs } from "./errors.js";

type Schema = { properties?: Record<string, unknown>; required?: string[] };
type Operation = {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses: Record<string, { description?: string; headers?: Record<string, unknown> } | { $ref: string }>;
};

const etag = {
  description: 'The resource\'s version as an entity tag, e.g. "3"',
  schema: { type: "string" },
};

const header = (name: string, description: string) => ({
  in: "header",
  name,
  required: false,
  description,
  // No example: Swagger UI would fill it in and send it with every "Try it out".
  schema: { type: "string" },
});

const ifNoneMatch = header(
  "If-None-Match",
  "The ETag the client already has: when it is still current the answer is 304 with no body.",
);
const ifMatch = header(
  "If-Match",
  'Change the resource only at this version (its ETag, e.g. "1", or *): otherwise 412 with ' +
    "details.current_version and nothing changed. A value that is not an entity-tag list is 400.",
);

/**
 * A versioned resource's operation as REST serves it (docs/http.md): its
 * successes carry ETag; a GET documents If-None-Match and 304; a write
 * documents If-Match and 412, and not the tRPC-only `expected_version`.
 */
export function documentVersioned(method: string, operation: Operation): void {
  const fields = operation.requestBody?.content?.["application/json"]?.schema;
  if (fields?.properties) delete fields.properties.expected_version;
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.name !== "expected_version");
  const responses = operation.responses;
  for (const status of ["200", "201", "202"]) {
    const response = responses[status];
    if (response && !("$ref" in response)) response.headers = { ...response.headers, ETag: etag };
  }
  if (method === "get") {
    parameters.push(ifNoneMatch);
    responses["304"] = { description: "Not modified: the If-None-Match tag is current", headers: { ETag: etag } };
  } else if (method !== "post") {
    parameters.push(ifMatch);
    // 400: an If-Match that is not an entity-tag list, even on a write without a body.
    Object.assign(responses, errorResponseRefs([400, 412]));
  }
  operation.parameters = parameters;
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}
