import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import type { Config } from "../../config.js";
import { type Credential, credentialsOf } from "../../modules/auth/policy.js";
import type { AppRouter } from "../../modules/index.js";
import { procedureMetas } from "../../trpc/internals.js";
import { creates, type Meta } from "../../trpc/meta.js";
import { errorComponents, errorResponseRefs } from "./errors.js";
import { documentIdempotent } from "./idempotency.js";
import { documentList } from "./list-headers.js";
import type { ExtraPaths, Operation } from "./types.js";
import { documentVersioned } from "./versioned-resources.js";

export const securitySchemes = {
  bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A token from POST /token" },
  apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "A key from API_KEYS" },
  oauth2: { type: "oauth2", flows: { password: { tokenUrl: "token", scopes: {} } } },
} as const;

// A bearer token is also what the oauth2 scheme yields, so both name it.
const securityOf: Record<Credential, Record<string, string[]>[]> = {
  bearer: [{ bearer: [] }, { oauth2: [] }],
  apiKey: [{ apiKey: [] }],
};

/**
 * The OpenAPI document, built once at start. trpc-to-openapi documents every
 * success as 200 and its own error shape; this rewrites each operation's
 * responses to the contract: its real success status and the real error bodies,
 * and sets its security to exactly what it accepts under the running AUTH_POLICY.
 */
export function buildOpenApiDocument(
  router: AppRouter,
  version: string,
  extraPaths: ExtraPaths = {},
  authPolicy: Config["authPolicy"] = "open",
) {
  const metas = new Map(
    [...procedureMetas(router).values()].flatMap((meta) =>
      meta.openapi ? [[operationKey(meta.openapi.method, meta.openapi.path), meta] as const] : [],
    ),
  );
  const document = generateOpenApiDocument(router, {
    title: "Agent Management API",
    description:
      "Register, run and watch agents. The same procedures are served as REST (here) and as typed tRPC at /trpc.",
    version,
    baseUrl: "/",
    securitySchemes,
    paths: extraPaths,
  });

  const pageSchemas = new Set<string>();
  for (const [path, pathItem] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(pathItem as Record<string, Operation>)) {
      const meta = metas.get(operationKey(method, path));
      // Versioned data routes have their own formats: http/versioned/openapi.ts documents them.
      if (!meta || meta.apiVersion) continue;
      const status = meta.successStatus ?? 200;
      const success = operation.responses["200"];
      const responses: Operation["responses"] = {};
      if (success && meta.stream === "sse") {
        const content = { "text/event-stream": meta.streamContent ?? { schema: { type: "string" } } };
        responses["200"] = { description: "A stream of server-sent events", content };
      } else if (success && status === 204) responses["204"] = { description: "No content" };
      else if (success) responses[String(status)] = status === 201 && meta.location ? withLocation(success) : success;
      const other = meta.otherSuccess;
      if (success && other) {
        // A null result is the 204: the body of the main success is never null.
        if (other.status === 204) responses[String(status)] = withoutNull(responses[String(status)] ?? success);
        responses[String(other.status)] =
          other.status === 204 ? { description: other.description } : { ...success, description: other.description };
      }
      const errorStatuses = new Set((meta.openapi?.errorResponses as number[] | undefined) ?? []);
      if (["post", "put", "patch"].includes(method)) for (const s of [400, 413, 415]) errorStatuses.add(s);
      // Another method at the path is 405 with Allow (docs/http.md). A path item has no responses of its
      // own, so each of its operations documents it.
      errorStatuses.add(405);
      // Any operation can fail unexpectedly, or be shed when overloaded or the database is down.
      errorStatuses.add(500);
      errorStatuses.add(503);
      const { credentials, optional } = credentialsOf(meta, authPolicy);
      // An empty list says "no credentials" explicitly, as linters ask; `{}` first says they are optional.
      const schemes = credentials.flatMap((credential) => securityOf[credential]);
      operation.security = schemes.length > 0 && optional ? [{}, ...schemes] : schemes;
      // Credentials that are sent are always judged: a bad token is 401, a bad key (or a missing scope) 403.
      if (credentials.length > 0) errorStatuses.add(401);
      if (credentials.includes("apiKey")) errorStatuses.add(403);
      if (meta.access === "project" || meta.access === "caller") {
        // A project the caller cannot act in (X-Project-Id, or the path's) is 404 {"detail":"Project not found"}.
        errorStatuses.add(404);
        documentProject(operation, meta);
      }
      Object.assign(responses, errorResponseRefs([...errorStatuses].sort((a, b) => a - b)));
      operation.responses = responses;
      if (meta.versioned) documentVersioned(method, operation as Parameters<typeof documentVersioned>[1]);
      if (meta.paged) {
        const page = documentList(operation, document.components?.schemas ?? {});
        if (page) pageSchemas.add(page);
      }
      if (creates(meta)) documentIdempotent(operation as Parameters<typeof documentIdempotent>[0]);
    }
  }
  // The adapter's own error schemas (`error.BAD_REQUEST`, …) describe bodies this service never sends;
  // a page's schema is tRPC's answer, and REST answers its items.
  const generatedSchemas = (document.components?.schemas ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(generatedSchemas)) if (name.startsWith("error.")) delete generatedSchemas[name];
  const referenced = JSON.stringify(document.paths);
  for (const name of pageSchemas)
    if (!referenced.includes(`"#/components/schemas/${name}"`)) delete generatedSchemas[name];
  const used = new Set(
    Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { tags?: string[] }>).flatMap((operation) => operation.tags ?? []),
    ),
  );
  document.tags = resourceTags.filter((tag) => used.has(tag.name));
  document.components = {
    ...document.components,
    ...errorComponents(document.components ?? {}, JSON.stringify(document.paths)),
  } as OpenAPIObject["components"] & object;
  return document;
}

/**
 * A project operation: the scope it needs, in `x-required-scopes` and in its
 * description (which Swagger UI shows), and the `X-Project-Id` header a
 * signed-in user names the project with.
 */
function documentProject(operation: Operation & { description?: string }, meta: Meta) {
  const required = [meta.scope, meta.alsoScope?.scope].filter((scope) => scope !== undefined);
  if (required.length > 0) {
    (operation as Record<string, unknown>)["x-required-scopes"] = required;
    const also = meta.alsoScope ? ` (or \`${meta.alsoScope.scope}\`: ${meta.alsoScope.description})` : "";
    const needs = `Needs the scope \`${meta.scope}\`${also}.`;
    operation.description = operation.description ? `${operation.description}\n\n${needs}` : needs;
  }
  if (meta.projectInPath) return;
  operation.parameters = [
    ...(operation.parameters ?? []),
    {
      in: "header",
      name: "X-Project-Id",
      required: false,
      description:
        "The project to act in, for a signed-in user (default: the first they joined); an API key acts in its own.",
      schema: { type: "string", format: "uuid" },
    } as NonNullable<Operation["parameters"]>[number],
  ];
}

const resourceTags = [
  { name: "agents", description: "Register agents and drive their lifecycle." },
  { name: "tasks", description: "Work given to an agent, nested under it." },
  {
    name: "leases",
    description: "Workers take an agent's tasks, renew their hold while they work, and give them back.",
  },
  {
    name: "webhooks",
    description: "Signed HTTP calls for matching events (Standard Webhooks v1), retried, logged and replayable.",
  },
  {
    name: "schedules",
    description: "Cron and interval schedules that create an agent's tasks, each run time exactly once.",
  },
  { name: "events", description: "Every change of agents and tasks, as pages and as live streams." },
  { name: "auth", description: "Sign in with the OAuth2 password grant; who is signed in." },
  { name: "projects", description: "A team's share of the deployment: its agents, keys, members and audit log." },
  { name: "members", description: "Who may act in a project, and with which role." },
  { name: "api keys", description: "Keys a project's admins make and revoke, each with its own scopes." },
  { name: "audit", description: "Who did what in a project." },
];

const operationKey = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\/$/, "")}`;

type Response = Operation["responses"][string];

/** The response with its schema's `null` alternative dropped (a nullable output whose null is answered as 204). */
function withoutNull(response: Response): Response {
  const media = (response.content as Record<string, { schema?: { anyOf?: { type?: string }[] } }> | undefined)?.[
    "application/json"
  ];
  const alternatives = media?.schema?.anyOf?.filter((schema) => schema.type !== "null");
  if (!media || alternatives?.length !== 1) return response;
  return { ...response, content: { "application/json": { ...media, schema: alternatives[0] } } };
}

const withLocation = (response: Operation["responses"][string]) => ({
  ...response,
  description: "Created",
  headers: { Location: { description: "Path of the created resource", schema: { type: "string" } } },
});
