// REST requests generated from the served document: every operation, with
// valid, missing and hostile ids, query strings and bodies of right and wrong shapes.
import fc from "fast-check";
import { methodsOf, type Operation, type Parameter, type ServedDocument } from "./document.js";
import {
  hostileHeaders,
  hostileIds,
  hostileQueryValues,
  hostileRawBodies,
  hostileValue,
  invalidUtf8Bodies,
  rawRequests,
  wrongContentTypes,
} from "./hostile.js";
import { type Body, type FuzzRequest, Ref } from "./request.js";
import { acceptedValue, propertyValue } from "./values.js";

const allMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const hostile = new Set(hostileIds);

/** A path id: one that exists (most often), a well-formed one that does not, or no id at all. */
export const idSegment = (existing: fc.Arbitrary<Ref | string>) =>
  fc.oneof(
    { weight: 6, arbitrary: existing },
    { weight: 2, arbitrary: fc.uuid({ version: 4 }) },
    { weight: 2, arbitrary: fc.constantFrom(...hostileIds) },
  );

function pathSegments(operation: Operation): fc.Arbitrary<(string | Ref)[]> {
  const parts = operation.path.slice(1).split("/");
  const hasTask = parts.includes("{task_id}");
  return fc.nat().chain((pick) => {
    // Under a task's path, the agent is mostly the task's own, sometimes another (a task of another agent is 404).
    const agent = hasTask
      ? fc.oneof(
          { weight: 5, arbitrary: fc.constant(new Ref("taskAgent", pick)) },
          fc.nat().map((n) => new Ref("agent", n)),
        )
      : fc.constant(new Ref("agent", pick));
    return fc.tuple(
      ...parts.map((part): fc.Arbitrary<string | Ref> => {
        if (part === "{agent_id}") return idSegment(agent);
        if (part === "{task_id}") return idSegment(fc.constant(new Ref("task", pick)));
        if (part.startsWith("{")) return idSegment(fc.uuid({ version: 4 }));
        return fc.constant(part);
      }),
    );
  });
}

function queryValue(document: ServedDocument, parameter: Parameter): fc.Arbitrary<string | undefined> {
  const valid = propertyValue(document, parameter.name, parameter.schema).map((v) =>
    // An object parameter (style deepObject, e.g. metadata) goes as name[key]=value pairs.
    typeof v === "object" && v !== null
      ? Object.entries(v)
          .map(([key, item]) => `${parameter.name}[${encodeURIComponent(key)}]=${encodeURIComponent(String(item))}`)
          .join("&")
      : `${parameter.name}=${encodeURIComponent(String(v))}`,
  );
  const hostile = fc.constantFrom(...hostileQueryValues).map((v) => `${parameter.name}=${v}`);
  return fc.oneof(
    { weight: parameter.required ? 1 : 4, arbitrary: fc.constant(undefined) },
    { weight: 5, arbitrary: valid },
    { weight: 2, arbitrary: hostile },
  );
}

// Query-string tricks beyond one value per parameter.
const queryExtras = fc.oneof(
  { weight: 12, arbitrary: fc.constant([] as string[]) },
  { weight: 1, arbitrary: fc.constant(["unknown=1"]) },
  { weight: 1, arbitrary: fc.constantFrom(["limit=1", "limit=2"], ["skip=0", "skip=1"], ["status=idle", "status=x"]) },
  { weight: 1, arbitrary: fc.constantFrom(["status[]=idle"], ["limit[a]=1"], ["skip[$gt]=0"], ["a[b][c][d][e][f]=1"]) },
  { weight: 1, arbitrary: fc.constantFrom(["%"], ["=1"], ["&&&"], ["limit"], ["month=2021-01&month=2021-02"]) },
);

function query(document: ServedDocument, operation: Operation): fc.Arbitrary<string[]> {
  const parameters = operation.parameters.filter((p) => p.in === "query");
  return fc
    .tuple(fc.tuple(...parameters.map((p) => queryValue(document, p))), queryExtras)
    .map(([values, extras]) => [...values.filter((v): v is string => v !== undefined), ...extras]);
}

function headers(document: ServedDocument, operation: Operation): fc.Arbitrary<Record<string, string>> {
  const versioned = operation.parameters.find((p) => p.in === "header");
  // A header value can only hold visible ASCII, spaces and tabs: no client sends anything else.
  const sendable = (value: unknown) => String(value).replace(/[^\t\x20-\x7e]/g, "?");
  const own = versioned
    ? acceptedValue(document, versioned.schema).map((v) => ({ [versioned.name.toLowerCase()]: sendable(v) }))
    : fc.constant({});
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: own },
    { weight: 2, arbitrary: fc.constantFrom(...hostileHeaders) },
  );
}

type Sent = { body?: Body; contentType?: string };

function jsonBody(document: ServedDocument, operation: Operation): fc.Arbitrary<Sent> {
  const schema = operation.body?.schema ?? {};
  const valid = acceptedValue(document, schema) as fc.Arbitrary<Record<string, unknown>>;
  const properties = Object.keys((schema.properties ?? {}) as object);
  const required = (schema.required ?? []) as string[];
  const json = (value: unknown): Body => ({ kind: "json", value });
  const shapes: fc.WeightedArbitrary<Body>[] = [
    { weight: 35, arbitrary: valid.map(json) },
    { weight: 5, arbitrary: valid.map((v) => json({ ...v, unknown_field: "ignored" })) },
    { weight: 3, arbitrary: fc.constant(json({})) },
    { weight: 10, arbitrary: hostileValue.map(json) },
    { weight: 10, arbitrary: fc.constantFrom(...hostileRawBodies).map((text): Body => ({ kind: "text", text })) },
    { weight: 4, arbitrary: fc.constantFrom(...invalidUtf8Bodies).map((bytes): Body => ({ kind: "bytes", bytes })) },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: "oversize" }) },
  ];
  if (properties.length > 0) {
    // One field of the wrong kind, or a required one left out.
    shapes.push({
      weight: 20,
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...properties), hostileValue)
        .map(([v, name, bad]) => json({ ...v, [name]: bad })),
    });
  }
  if (required.length > 0) {
    shapes.push({
      weight: 5,
      arbitrary: fc.tuple(valid, fc.constantFrom(...required)).map(([v, name]) => {
        const { [name]: _left, ...rest } = v;
        return json(rest);
      }),
    });
  }
  const contentType = fc.oneof(
    { weight: 10, arbitrary: fc.constant<string | undefined>("application/json") },
    { weight: 1, arbitrary: fc.constant<string | undefined>("application/json; charset=utf-8") },
    { weight: 2, arbitrary: fc.constantFrom(...wrongContentTypes) },
  );
  return fc.oneof(
    { weight: 30, arbitrary: fc.record({ body: fc.oneof(...shapes), contentType }) },
    { weight: 1, arbitrary: fc.constant<Sent>({ contentType: "application/json" }) }, // no body at all
  );
}

function formBody(document: ServedDocument, operation: Operation): fc.Arbitrary<Sent> {
  const valid = acceptedValue(document, operation.body?.schema ?? {}) as fc.Arbitrary<Record<string, unknown>>;
  const form = (fields: Record<string, unknown>) => new URLSearchParams(fields as Record<string, string>).toString();
  const type = "application/x-www-form-urlencoded";
  return fc.oneof(
    { weight: 6, arbitrary: valid.map((v): Sent => ({ body: { kind: "text", text: form(v) }, contentType: type })) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom("username=&password=", "password=x", "username=a", "grant_type=client_credentials", "%", "a=%FF")
        .map((text): Sent => ({ body: { kind: "text", text }, contentType: type })),
    },
    {
      weight: 1,
      arbitrary: valid.map((v): Sent => ({ body: { kind: "json", value: v }, contentType: "application/json" })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...invalidUtf8Bodies)
        .map((bytes): Sent => ({ body: { kind: "bytes", bytes }, contentType: type })),
    },
    { weight: 1, arbitrary: fc.constant<Sent>({ body: { kind: "oversize" }, contentType: type }) },
  );
}

function body(document: ServedDocument, operation: Operation): fc.Arbitrary<Sent> {
  if (operation.body?.contentType === "application/json") return jsonBody(document, operation);
  if (operation.body) return formBody(document, operation);
  // No body expected: sometimes one comes anyway.
  return fc.oneof(
    { weight: 19, arbitrary: fc.constant<Sent>({}) },
    {
      weight: 1,
      arbitrary: hostileValue.map(
        (value): Sent => ({ body: { kind: "json", value }, contentType: "application/json" }),
      ),
    },
  );
}

function method(document: ServedDocument, operation: Operation): fc.Arbitrary<string> {
  const wrong = allMethods.filter((m) => !methodsOf(document, operation.path).includes(m));
  const choices: fc.WeightedArbitrary<string>[] = [{ weight: 92, arbitrary: fc.constant(operation.method) }];
  if (wrong.length > 0) choices.push({ weight: 5, arbitrary: fc.constantFrom(...wrong) });
  if (operation.method === "GET") choices.push({ weight: 3, arbitrary: fc.constant("HEAD") });
  return fc.oneof(...choices);
}

function operationRequest(document: ServedDocument, operation: Operation): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      path: pathSegments(operation),
      query: query(document, operation),
      headers: headers(document, operation),
      sent: body(document, operation),
      method: method(document, operation),
    })
    .map(({ path, query, headers, sent, method }): FuzzRequest => {
      const label = `${operation.method} ${operation.path}`;
      const expect =
        method === operation.method
          ? ({ kind: "operation", method, path: operation.path } as const)
          : method === "HEAD"
            ? ({ kind: "head", path: operation.path } as const)
            : ({ kind: "wrongMethod", hostileId: path.some((p) => typeof p === "string" && hostile.has(p)) } as const);
      const sentHeaders = sent.contentType ? { "content-type": sent.contentType, ...headers } : headers;
      return {
        label: method === operation.method ? label : `${method} on ${label}`,
        method,
        path,
        query,
        headers: sentHeaders,
        body: sent.body,
        expect,
      };
    });
}

const unknownPaths = [
  ["agentz"],
  ["nope"],
  ["v3", "cars"],
  ["v1", "agents"],
  ["agents", "x", "y", "z", "w"],
  ["%2e%2e", "%2e%2e", "etc", "passwd"],
  ["token", "x"],
  ["openapi.json", "x"],
];

/** Every REST operation, the ones that take bodies or ids more often than the read-only data routes. */
export function restRequests(document: ServedDocument, operations: Operation[]): fc.Arbitrary<FuzzRequest> {
  const weighted = operations.map((operation) => ({
    weight: operation.body ? 6 : operation.path.startsWith("/agents") ? 4 : 1,
    arbitrary: operationRequest(document, operation),
  }));
  const unknown = fc.constantFrom(...unknownPaths).map(
    (path): FuzzRequest => ({
      label: "unknown path",
      method: "GET",
      path,
      query: [],
      headers: {},
      expect: { kind: "unknownPath" },
    }),
  );
  return fc.oneof(...weighted, { weight: 2, arbitrary: unknown });
}

/** Request lines no HTTP client library would send, over a bare socket. */
export const rawRequestLines = fc.constantFrom(...rawRequests).map(
  (text): FuzzRequest => ({
    label: `raw ${JSON.stringify(text.split("\r\n")[0]?.slice(0, 60))}`,
    method: "RAW",
    path: [],
    query: [],
    headers: {},
    raw: text,
    expect: { kind: "raw" },
  }),
);
