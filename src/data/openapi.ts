import type { Config } from "../config.js";
import { procedureMetas } from "../http/procedure-metas.js";
import type { Meta } from "../http/rest/procedures.js";
import type { AppRouter } from "../routers/index.js";
import { ref, versionedComponents } from "./openapi-components.js";
import { type ApiVersion, type Endpoint, type EndpointTable, endpointTable, groupsOf } from "./routes.js";

type Described = { procedure: string; meta: Meta };

type Response = { description: string; headers?: Record<string, unknown>; content?: unknown };
type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: unknown[];
  responses: Record<string, Response | { $ref: string }>;
  deprecated?: boolean;
  security?: unknown[];
};
type Document = { paths?: Record<string, Record<string, unknown>>; components?: object; tags?: { name: string }[] };

const cacheHeaders = { ETag: ref("headers", "ETag"), "Cache-Control": ref("headers", "CacheControl") };
const versionHeader = { "X-API-Version": ref("headers", "ApiVersion") };

function procedureOperation(version: ApiVersion, generated: Operation, errorStatuses: number[]): Operation {
  const success = generated.responses["200"] as Response;
  const responses: Operation["responses"] = {
    "200": { ...success, headers: { ...cacheHeaders, ...versionHeader } },
    "304": ref("responses", "NotModified"),
  };
  // Only parameters can be malformed: a route without any never answers 400.
  if (generated.parameters?.length) responses["400"] = ref("responses", `V${version}BadRequest`);
  for (const status of errorStatuses) if (status === 404) responses["404"] = ref("responses", `V${version}NotFound`);
  responses["500"] = ref("responses", `V${version}InternalError`);
  responses["503"] = ref("responses", `V${version}Unavailable`);
  return { ...generated, responses };
}

const healthOperation = (): Operation => ({
  operationId: "data-v1-health",
  summary: "Service and database health (never cached)",
  tags: ["v1 health"],
  responses: {
    "200": {
      description: "The service answers and so does its database",
      headers: versionHeader,
      content: { "application/json": { schema: ref("schemas", "HealthOk") } },
    },
    "503": ref("responses", "HealthUnavailable"),
  },
});

const redirectOperation = (route: string, location: string): Operation => ({
  operationId: `data-v1${route.replaceAll("/", "-")}-renamed`,
  summary: `Renamed: now ${location}`,
  description: `Answers 301 with \`Location: ${location}\` and the query string kept.`,
  tags: [`v1 ${route.split("/")[1]}`],
  deprecated: true,
  responses: {
    "301": {
      description: "Moved to the new version's path",
      headers: {
        Location: { schema: { type: "string", example: `${location}?month=2021-01` } },
        "X-API-Deprecated": { schema: { type: "string", const: "true" } },
        ...versionHeader,
      },
    },
  },
});

function deprecate(operation: Operation, successor: string | undefined) {
  operation.deprecated = true;
  for (const response of Object.values(operation.responses)) {
    if ("$ref" in response) continue;
    response.headers = {
      ...response.headers,
      "X-API-Deprecation": ref("headers", "Deprecation"),
      "X-API-Sunset": ref("headers", "Sunset"),
      ...(successor ? { Link: ref("headers", "SuccessorLink") } : {}),
    };
  }
}

const camelCase = (id: string) => id.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());

/**
 * The root answers as the default version, or as the one X-API-Version names;
 * `missingInOne`: a version has no such route, and answers 404 (SPEC §1's body).
 */
function rootAlias(operation: Operation, version: ApiVersion, route: string, missingInOne: boolean): Operation {
  const alias = structuredClone(operation);
  alias.operationId = `${operation.operationId?.replace(`-v${version}`, "-default")}`;
  alias.tags = ["default version"];
  alias.description = `Answers as \`/v${version}${route}\`, the default version. \`X-API-Version: 1\` or \`2\` selects that version's parameters and format instead.`;
  alias.parameters = [
    ...(alias.parameters ?? []),
    { in: "header", name: "X-API-Version", required: false, schema: { type: "string", enum: ["1", "2"] } },
  ];
  for (const [status, response] of Object.entries(alias.responses)) {
    if (status === "400") alias.responses[status] = ref("responses", "RootBadRequest");
    else if (!("$ref" in response)) response.headers = { ...response.headers, Vary: ref("headers", "Vary") };
  }
  if (!alias.responses["400"]) alias.responses["400"] = ref("responses", "RootBadRequest");
  if (missingInOne && !alias.responses["404"]) alias.responses["404"] = ref("responses", "NotFound");
  return alias;
}

const versionNotes: Record<ApiVersion, string> = {
  1: "v1: snake_case names, whole results `{success, data, count}`, errors `{error: {code, message, details}}`.",
  2: 'v2: camelCase names, pages `{data, meta: {total, page, pageSize}}`, errors `{error: "…"}`.',
};

/** The version tags after the others, one per group of each version, each saying what its version's format is. */
function tagsOf(
  doc: Document,
  table: EndpointTable<Described>,
  config: Pick<Config, "defaultApiVersion" | "apiV1Sunset">,
) {
  const sunset = config.apiV1Sunset ? ` Deprecated: removed after ${config.apiV1Sunset}.` : "";
  const versionTags = [
    {
      name: "default version",
      description: `Unprefixed routes answer as v${config.defaultApiVersion} (DEFAULT_API_VERSION); \`X-API-Version: 1\` or \`2\` picks a version per request.`,
    },
    ...[...table].flatMap(([version, endpoints]) =>
      groupsOf(endpoints).map((group) => ({
        name: `v${version} ${group}`,
        description: versionNotes[version] + (version === 1 ? sunset : ""),
      })),
    ),
  ];
  const versioned = new Set(versionTags.map((tag) => tag.name));
  const operations = Object.values(doc.paths ?? {}).flatMap((item) => Object.values(item) as Operation[]);
  const others = [...new Set(operations.flatMap((operation) => operation.tags ?? []))]
    .filter((name) => !versioned.has(name))
    .map((name) => doc.tags?.find((tag) => tag.name === name) ?? { name });
  return [...others, ...versionTags];
}

/**
 * Documents every versioned route with its version's formats and headers:
 * /v1 and /v2 in one document, tagged by version, so both contracts sit side
 * by side in /docs; the root's routes are listed as the default version's.
 */
export function documentVersionedRoutes<T extends object>(
  document: T,
  router: AppRouter,
  config: Pick<Config, "defaultApiVersion" | "apiV1Sunset">,
): T {
  const doc = document as Document;
  doc.paths ??= {};
  const paths = doc.paths;
  const table = endpointTable([...procedureMetas(router)].map(([procedure, meta]): Described => ({ procedure, meta })));
  const operationOf = (version: ApiVersion, route: string, endpoint: Endpoint<Described>): Operation => {
    if (endpoint.kind === "health") return healthOperation();
    if (endpoint.kind === "redirect") return redirectOperation(route, endpoint.location);
    const generated = paths[`/v${version}${route}`]?.get as Operation;
    const errorStatuses = endpoint.route.meta.openapi?.errorResponses;
    return procedureOperation(version, generated, Array.isArray(errorStatuses) ? errorStatuses : []);
  };
  for (const [version, endpoints] of table) {
    for (const [route, endpoint] of endpoints) {
      // The data groups never ask for credentials.
      const operation = { ...operationOf(version, route, endpoint), security: [] };
      if (version === 1 && config.apiV1Sunset) {
        deprecate(operation, endpoint.kind === "redirect" || table.get(2)?.has(route) ? "v2" : undefined);
      }
      paths[`/v${version}${route}`] = { get: operation };
    }
  }
  const defaultVersion = config.defaultApiVersion;
  for (const route of table.get(defaultVersion)?.keys() ?? []) {
    const missingInOne = [...table.values()].some((endpoints) => !endpoints.has(route));
    paths[route] = {
      get: rootAlias(paths[`/v${defaultVersion}${route}`]?.get as Operation, defaultVersion, route, missingInOne),
    };
  }
  // Ids are built from procedure paths (`data-v1-cars-list`); generated clients read camelCase best.
  for (const route of Object.keys(paths)) {
    const operation = paths[route]?.get as Operation | undefined;
    if (operation?.operationId) operation.operationId = camelCase(operation.operationId);
  }
  doc.tags = tagsOf(doc, table, config);
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown> | undefined>;
  for (const [kind, entries] of Object.entries(versionedComponents(Boolean(config.apiV1Sunset))))
    components[kind] = { ...components[kind], ...entries };
  doc.components = components;
  return document;
}
