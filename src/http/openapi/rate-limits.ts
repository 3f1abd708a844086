type Response = { $ref?: string; description?: string; headers?: Record<string, unknown> };
type Document = {
  paths?: Record<string, Record<string, { responses?: Record<string, Response> }>>;
  components?: { headers?: Record<string, unknown>; responses?: Record<string, unknown> };
};

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

const headers = {
  RateLimitPolicy: {
    description: 'The limit in force: `"default";q=<requests>;w=60` (IETF draft "RateLimit header fields for HTTP")',
    schema: { type: "string", example: '"default";q=600;w=60' },
  },
  RateLimit: {
    description: 'What remains of it: `"default";r=<requests left>;t=<seconds until the window ends>`',
    schema: { type: "string", example: '"default";r=599;t=42' },
  },
};
const limitHeaders = { "RateLimit-Policy": ref("headers", "RateLimitPolicy"), RateLimit: ref("headers", "RateLimit") };
const refusalHeaders = {
  "Retry-After": { description: "Seconds until the window ends", schema: { type: "integer" } },
  ...limitHeaders,
};
const message = "Too many requests; try again later";
const json = (schema: object, example: object) => ({ "application/json": { schema, example } });

const responses = {
  RateLimited: {
    description: "Over RATE_LIMIT_PER_MINUTE",
    headers: refusalHeaders,
    content: json(ref("schemas", "ErrorBody"), {
      error: "rate_limited",
      message,
      details: { retry_after_s: 17 },
    }),
  },
  V1RateLimited: {
    description: "Over RATE_LIMIT_PER_MINUTE (v1 format)",
    headers: refusalHeaders,
    content: json(ref("schemas", "V1Error"), { error: { code: "RATE_LIMITED", message, details: [] } }),
  },
  V2RateLimited: {
    description: "Over RATE_LIMIT_PER_MINUTE (v2 format)",
    headers: refusalHeaders,
    content: json(ref("schemas", "V2Error"), { error: message }),
  },
};

const rootRateLimited = {
  description: "Over RATE_LIMIT_PER_MINUTE, in the selected version's format",
  headers: refusalHeaders,
  content: { "application/json": { schema: { oneOf: [ref("schemas", "V1Error"), ref("schemas", "V2Error")] } } },
};

// Probes and the token endpoint (which has its own throttle) are never counted.
const uncounted = (path: string) => /(^|\/)health$/.test(path) || path === "/token";

/** The 429 of a path, in its format: a data version's, the selected version's at the data routes' root, else docs/errors.md. */
function refusalOf(path: string, paths: NonNullable<Document["paths"]>) {
  const version = /^\/v([12])\//.exec(path)?.[1];
  if (version) return ref("responses", `V${version}RateLimited`);
  return paths[`/v1${path}`] || paths[`/v2${path}`] ? rootRateLimited : ref("responses", "RateLimited");
}

const byStatus = (responses: Record<string, Response>) =>
  Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));

/**
 * With RATE_LIMIT_PER_MINUTE on, every counted operation documents the 429 in
 * its own format, and its inline responses (the successes) the RateLimit
 * fields. Off, the document says nothing of limits, as the service does not.
 */
export function documentRateLimits<T>(document: T, perMinute: number): T {
  if (perMinute === 0) return document;
  const doc = document as Document;
  const paths = doc.paths ?? {};
  for (const [path, item] of Object.entries(paths)) {
    if (uncounted(path)) continue;
    for (const operation of Object.values(item)) {
      if (!operation.responses) continue;
      for (const response of Object.values(operation.responses)) {
        if (!response.$ref) response.headers = { ...response.headers, ...limitHeaders };
      }
      operation.responses = byStatus({ ...operation.responses, "429": refusalOf(path, paths) });
    }
  }
  doc.components = {
    ...doc.components,
    headers: { ...doc.components?.headers, ...headers },
    responses: { ...doc.components?.responses, ...responses },
  };
  return document;
}
