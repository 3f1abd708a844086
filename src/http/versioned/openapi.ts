import type { Config } from "../../config.js";
import type { AppRouter } from "../../modules/index.js";
import { procedureMetas } from "../../trpc/internals.js";
import { errorResponseRefs } from "../openapi/errors.js";
import type { Meta } from "../rest/procedures.js";
import { ref, versionedComponents } from "./components.js";
import { type ApiVersion, type Endpoint, type EndpointTable, endpointTable, groupsOf } from "./endpoints.js";

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

type Content = { "application/json"?: { schema?: unknown; example?: unknown; examples?: unknown } };

/** A response, or the response component it refers to. */
function resolved(response: Response | { $ref: string } | undefined, components: Components): Response | undefined {
  if (!response || !("$ref" in response)) return response;
  return components.responses?.[response.$ref.split("/").pop() as string];
}

type Components = {
  responses?: Record<string, Response>;
  schemas?: Record<string, { example?: unknown; examples?: unknown[] }>;
};

/** One named example per version whose schema (a component) has one: `v1`, `v2`. */
function examplesOf(schemas: unknown[], versions: ApiVersion[], components: Components) {
  const examples: Record<string, { summary: string; value: unknown }> = {};
  schemas.forEach((schema, i) => {
    const name = (schema as { $ref?: string } | undefined)?.$ref?.split("/").pop();
    const component = name ? components.schemas?.[name] : undefined;
    const value = component?.example ?? component?.examples?.[0];
    if (value !== undefined) examples[`v${versions[i]}`] = { summary: `v${versions[i]} format`, value };
  });
  return Object.keys(examples).length > 1 ? { examples } : {};
}

/**
 * The root answers as the default version, or as the one X-API-Version names:
 * each response is documented with both versions' bodies (oneOf), so a
 * validating proxy accepts either. `other`: the other version's operation,
 * absent when it has no such route and answers 404 (docs/http.md's body).
 */
function rootAlias(
  operation: Operation,
  version: ApiVersion,
  route: string,
  other: Operation | undefined,
  components: Components,
): Operation {
  const alias = structuredClone(operation);
  const otherVersion = version === 1 ? 2 : 1;
  alias.operationId = `${operation.operationId?.replace(`-v${version}`, "-default")}`;
  alias.tags = ["default version"];
  alias.description = `Answers as \`/v${version}${route}\`, the default version. \`X-API-Version: 1\` or \`2\` selects that version's parameters and format instead${other ? "" : `; v${otherVersion} has no such route (404)`}.`;
  alias.parameters = [
    ...(alias.parameters ?? []),
    {
      in: "header",
      name: "X-API-Version",
      required: false,
      description: "The version whose parameters and format the answer follows; default: DEFAULT_API_VERSION",
      schema: { type: "string", enum: ["1", "2"] },
      example: String(version),
    },
  ];
  const statuses = new Set([...Object.keys(alias.responses), ...Object.keys(other?.responses ?? {})]);
  if (!other) statuses.add("404");
  // Its X-API-Version parameter can be refused, even where the route takes no other (a renamed one).
  statuses.add("400");
  for (const status of statuses) {
    if (status === "400") {
      alias.responses[status] = ref("responses", "RootBadRequest");
      continue;
    }
    const mine = resolved(alias.responses[status], components);
    const missing = status === "404" ? ref("responses", "NotFound") : undefined;
    const theirs = resolved(other ? other.responses[status] : missing, components);
    if (status === "304") {
      alias.responses[status] = ref("responses", "NotModified");
      continue;
    }
    const schemas = [mine, theirs].map(
      (response) => (response?.content as Content | undefined)?.["application/json"]?.schema,
    );
    const distinct = [...new Map(schemas.filter(Boolean).map((schema) => [JSON.stringify(schema), schema])).values()];
    alias.responses[status] = {
      description:
        distinct.length > 1
          ? `${(mine ?? theirs)?.description?.replace(/ \(v\d format\)$/, "")}, in the selected version's format`
          : ((mine ?? theirs)?.description ?? "Response"),
      headers: { ...theirs?.headers, ...mine?.headers, Vary: ref("headers", "Vary") },
      ...(distinct.length > 0
        ? {
            content: {
              "application/json": {
                // The default version's examples: what a request without X-API-Version gets.
                ...(mine?.content as Content | undefined)?.["application/json"],
                // One example per version only where the versions' bodies differ.
                ...(distinct.length > 1 ? examplesOf(schemas, [version, otherVersion], components) : {}),
                schema: distinct.length === 1 ? distinct[0] : { oneOf: distinct },
              },
            },
          }
        : {}),
    };
  }
  alias.responses = Object.fromEntries(Object.entries(alias.responses).sort(([a], [b]) => a.localeCompare(b)));
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
      // Another method gets docs/http.md's 405, in every version (the dispatcher answers it as on every path).
      Object.assign(operation.responses, errorResponseRefs([405]));
      if (version === 1 && config.apiV1Sunset) {
        deprecate(operation, endpoint.kind === "redirect" || table.get(2)?.has(route) ? "v2" : undefined);
      }
      paths[`/v${version}${route}`] = { get: operation };
    }
  }
  const defaultVersion = config.defaultApiVersion;
  const otherVersion = defaultVersion === 1 ? 2 : 1;
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown> | undefined>;
  for (const [kind, entries] of Object.entries(versionedComponents(Boolean(config.apiV1Sunset))))
    components[kind] = { ...components[kind], ...entries };
  doc.components = components;
  for (const route of table.get(defaultVersion)?.keys() ?? []) {
    const mine = paths[`/v${defaultVersion}${route}`]?.get as Operation;
    const other = table.get(otherVersion)?.has(route)
      ? (paths[`/v${otherVersion}${route}`]?.get as Operation)
      : undefined;
    paths[route] = { get: rootAlias(mine, defaultVersion, route, other, components as Components) };
  }
  // Ids are built from procedure paths (`data-v1-cars-list`); generated clients read camelCase best.
  for (const route of Object.keys(paths)) {
    const operation = paths[route]?.get as Operation | undefined;
    if (operation?.operationId) operation.operationId = camelCase(operation.operationId);
  }
  doc.tags = tagsOf(doc, table, config);
  return document;
}
