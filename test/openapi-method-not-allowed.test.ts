import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { type OpenApiDocument, responseChecker } from "./helpers/openapi-responses.js";

// docs/http.md, docs/clients.md: a known path asked with another method answers 405
// {"detail":"Method Not Allowed"} with Allow, on every kind of path (the data
// routes too, whatever the version), and every operation documents it. A path
// item has no responses of its own, so each of a path's operations carries the
// 405 its other methods get; no client call of an operation meets it, so this
// file sends one to every path of the document.

type Header = { $ref?: string; schema?: object };
type Response = {
  $ref?: string;
  headers?: Record<string, Header>;
  content?: Record<string, { schema?: object; example?: unknown }>;
};
type Document = OpenApiDocument & {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { responses: Record<string, Response> };
};

const configs = {
  default: {},
  // The root as v2, v1 deprecated, RateLimit fields on every counted response, credentials everywhere:
  // each changes what the document says of a path, and the 405 still comes first.
  "v2 at the root, v1 sunset, rate limits, AUTH_POLICY=all": {
    DEFAULT_API_VERSION: "2",
    API_V1_SUNSET: "2027-06-30",
    RATE_LIMIT_PER_MINUTE: "1000",
    AUTH_POLICY: "all",
    API_KEYS: "key",
  },
};

const someId = "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69";
const methods = ["POST", "PUT", "PATCH", "DELETE", "GET"];

describe.each(Object.entries(configs))("405 with %s", (_name, env) => {
  let app: TestApp;
  let document: Document;
  beforeAll(async () => {
    app = await startTestApp(env);
    document = (await (await app.request("/openapi.json")).json()) as Document;
  });
  afterAll(() => app.close());

  const resolve = (response: Response | undefined) =>
    response?.$ref ? document.components.responses[response.$ref.replace("#/components/responses/", "")] : response;
  // The unprefixed data routes answer as the version X-API-Version names: both formats, and Vary.
  const atDataRoot = (path: string) => !/^\/v\d\//.test(path) && Boolean(document.paths[`/v1${path}`]);

  it("is documented on every operation: docs/http.md's body and Allow, once as a component", () => {
    expect(document.components.responses.MethodNotAllowed).toEqual({
      description: expect.any(String),
      headers: { Allow: { description: expect.any(String), schema: { type: "string", example: "GET, POST" } } },
      content: {
        "application/json": {
          schema: { $ref: "#/components/schemas/Detail" },
          example: { detail: "Method Not Allowed" },
        },
      },
    });
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method, response: operation.responses["405"] })),
    );
    expect(operations.length).toBeGreaterThan(40);
    for (const { path, method, response } of operations) {
      const label = `${method.toUpperCase()} ${path}`;
      if (!atDataRoot(path)) {
        expect(response, label).toEqual({ $ref: "#/components/responses/MethodNotAllowed" });
        continue;
      }
      const { headers, ...rest } = document.components.responses.MethodNotAllowed as Response;
      expect(response, label).toMatchObject(rest);
      expect(response?.headers, label).toMatchObject({ ...headers, Vary: { $ref: "#/components/headers/Vary" } });
    }
  });

  it("is what every path answers another method: the documented status, body and headers; Allow names its operations", async () => {
    const check = responseChecker(document);
    for (const [template, item] of Object.entries(document.paths)) {
      const served = Object.keys(item).map((method) => method.toUpperCase());
      const other = methods.find((method) => !served.includes(method)) as string;
      const path = template.replaceAll(/\{[^}]+\}/g, someId);
      const versions: Record<string, string>[] = atDataRoot(template)
        ? [{}, { "X-API-Version": "1" }, { "X-API-Version": "2" }]
        : [{}];
      for (const headers of versions) {
        const res = await app.request(path, { method: other, headers });
        const label = `${other} ${path} ${JSON.stringify(headers)}`;
        const body = await res.text();
        expect(res.status, `${label}: ${body}`).toBe(405);
        expect(res.headers.get("allow")?.split(", ").sort(), label).toEqual(served.sort());
        expect(JSON.parse(body), label).toEqual({ detail: "Method Not Allowed" });
        const contentType = res.headers.get("content-type");
        expect(contentType, label).toBe("application/json; charset=utf-8");
        for (const [method, operation] of Object.entries(item)) {
          expect(check({ method, path: template, status: 405, contentType, body }), label).toEqual([]);
          for (const header of Object.keys(resolve(operation.responses["405"])?.headers ?? {})) {
            expect(res.headers.has(header), `${label}: ${header}`).toBe(true);
          }
        }
      }
    }
  });
});
