import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

type Schema = { $ref?: string; example?: unknown; examples?: unknown[] };
type Media = { schema?: Schema; example?: unknown; examples?: object };
type Body = { content?: Record<string, Media> };
type Operation = {
  operationId: string;
  summary: string;
  tags: string[];
  requestBody?: Body;
  responses: Record<string, Body>;
};
const loadDocument = async () => {
  const res = await app.request("/openapi.json");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  return (await res.json()) as {
    openapi: string;
    paths: Record<string, Record<string, Operation>>;
    components: {
      securitySchemes: Record<string, unknown>;
      responses: Record<string, unknown>;
      schemas: Record<string, Schema>;
    };
  };
};

describe("/openapi.json", () => {
  it("documents every agent operation with its real statuses", async () => {
    const { openapi, paths } = await loadDocument();
    expect(openapi).toMatch(/^3\./);
    const statuses = (path: string, method: string) => Object.keys(paths[path]?.[method]?.responses ?? {}).sort();
    // Every agent operation takes credentials (401 for a bad token, 403 for a bad key or a missing scope) and acts
    // in a project, which may not be one the caller can act in (404).
    expect(statuses("/agents", "get")).toEqual(["200", "400", "401", "403", "404", "405", "500", "503"]);
    // 405: another method at the path (docs/http.md); 409 and 422: an Idempotency-Key in flight or reused (docs/http.md);
    // 304 and 412: conditional requests (docs/http.md).
    expect(statuses("/agents", "post")).toEqual([
      "201",
      "400",
      "401",
      "403",
      "404",
      "405",
      "409",
      "413",
      "415",
      "422",
      "500",
      "503",
    ]);
    expect(statuses("/agents/{agent_id}", "get")).toEqual(["200", "304", "401", "403", "404", "405", "500", "503"]);
    expect(statuses("/agents/{agent_id}", "put")).toEqual([
      "200",
      "400",
      "401",
      "403",
      "404",
      "405",
      "412",
      "413",
      "415",
      "500",
      "503",
    ]);
    expect(statuses("/agents/{agent_id}", "delete")).toEqual([
      "204",
      "400",
      "401",
      "403",
      "404",
      "405",
      "412",
      "500",
      "503",
    ]);
    expect(paths["/agents"]?.post?.responses["201"]).toMatchObject({
      headers: { Location: expect.any(Object) },
      content: { "application/json": { schema: { $ref: "#/components/schemas/Agent" } } },
    });
    expect(paths["/agents/{agent_id}"]?.delete?.responses["204"]).not.toHaveProperty("content");
  });

  it("gives every operation an operationId, a summary and a tag", async () => {
    const { paths } = await loadDocument();
    for (const operations of Object.values(paths)) {
      for (const operation of Object.values(operations)) {
        expect(operation.operationId).toMatch(/^[a-z][A-Za-z0-9]+$/);
        expect(operation.summary).toEqual(expect.any(String));
        expect(operation.tags.length).toBeGreaterThan(0);
      }
    }
  });

  it("gives every request body and success body an example", async () => {
    const { paths, components } = await loadDocument();
    const resolve = (schema: Schema = {}) =>
      schema.$ref ? components.schemas[schema.$ref.replace("#/components/schemas/", "")] : schema;
    const hasExample = ({ schema, example, examples }: Media) => {
      const resolved = resolve(schema);
      return [example, examples, resolved?.example, resolved?.examples].some((e) => e !== undefined);
    };
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, { requestBody, responses }] of Object.entries(operations)) {
        const bodies = [
          ["request", requestBody],
          ...Object.entries(responses).filter(([status]) => status.startsWith("2")),
        ] as const;
        for (const [name, body] of bodies) {
          for (const media of Object.values(body?.content ?? {})) {
            expect(hasExample(media), `${method.toUpperCase()} ${path} ${name}`).toBe(true);
          }
        }
      }
    }
  });

  it("declares the contract's error bodies and security schemes", async () => {
    const { components } = await loadDocument();
    expect(components.responses.NotFound).toMatchObject({
      content: { "application/json": { schema: { $ref: "#/components/schemas/Detail" } } },
    });
    expect(components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: "http", scheme: "bearer", bearerFormat: "JWT" }),
      apiKey: expect.objectContaining({ type: "apiKey", in: "header", name: "X-API-Key" }),
      oauth2: expect.objectContaining({ type: "oauth2", flows: { password: { tokenUrl: "token", scopes: {} } } }),
    });
  });
});

// Every src/href of a page that the browser fetches, resolved against the page (a data: URL is inline).
const assetsOf = (html: string, page: string) =>
  [...html.matchAll(/(?:src|href)="([^"]+)"/g)]
    .map((m) => new URL(m[1] as string, `http://host${page}`))
    .filter((url) => url.protocol !== "data:");

describe("/docs and /redoc", () => {
  it.each(["/docs", "/redoc"])("%s is served with every asset from this service", async (page) => {
    const res = await app.request(page);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).not.toMatch(/(src|href|url)\s*[=(]\s*["']?(https?:)?\/\//i);
    const assets = assetsOf(html, page);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset.host).toBe("host");
      const assetRes = await app.request(asset.pathname);
      expect(assetRes.status, asset.pathname).toBe(200);
    }
  });

  it("serves Swagger UI at /docs only, where the relative tokenUrl `token` resolves to /token", async () => {
    const slash = await app.request("/docs/?deepLink=1", { redirect: "manual" });
    expect(slash.status).toBe(301);
    expect(slash.headers.get("location")).toBe("/docs?deepLink=1");
    // Nothing under /docs/ is the page, so nothing there takes a token request.
    const underDocs = await app.request("/docs/token", { method: "POST" });
    expect(underDocs.status).toBe(404);
    expect(await underDocs.json()).toEqual({ detail: "Not Found" });
  });

  it("/docs points Swagger UI at /openapi.json", async () => {
    const init = await app.request("/docs/swagger-ui-init.js");
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('"swaggerUrl": "/openapi.json"');
  });
});
