import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { get } from "./helpers/data.js";
import { documentedBy } from "./helpers/openapi-responses.js";

// Three apps: the defaults, v2 as the default version, and v1 deprecated.
let app: TestApp;
let v2Default: TestApp;
let sunset: TestApp;
beforeAll(async () => {
  [app, v2Default, sunset] = await Promise.all([
    startTestApp({}, { sampleData: true }),
    startTestApp({ DEFAULT_API_VERSION: "2" }, { sampleData: true }),
    startTestApp({ API_V1_SUNSET: "2027-06-30" }, { sampleData: true }),
  ]);
});
afterAll(() => Promise.all([app, v2Default, sunset].map((each) => each.close())));

const v1Format = { success: true, data: expect.any(Array), count: expect.any(Number) };
const v2Format = { data: expect.any(Array), meta: expect.any(Object) };

describe("the root and the X-API-Version header", () => {
  it("serves v1 at the root by default, exactly as /v1, with Vary", async () => {
    const root = await get(app, "/cars?month=2021-01&make=BMW");
    const prefixed = await get(app, "/v1/cars?month=2021-01&make=BMW");
    expect(root.res.status).toBe(200);
    expect(root.text).toBe(prefixed.text);
    expect(root.res.headers.get("x-api-version")).toBe("1");
    expect(root.res.headers.get("vary")).toBe("X-API-Version");
    expect(root.res.headers.get("etag")).toBe(prefixed.res.headers.get("etag"));
    expect(prefixed.res.headers.get("vary")).toBeNull();
  });

  it("selects v2 with the header, including its parameters and errors", async () => {
    const { res, body } = await get(app, "/cars?month=2021-01&fuelType=Diesel&limit=5", { "X-API-Version": "2" });
    expect(res.headers.get("x-api-version")).toBe("2");
    expect(res.headers.get("vary")).toBe("X-API-Version");
    expect(body).toEqual({ ...v2Format, meta: { total: 40, page: 1, pageSize: 5 } });
    const missing = await get(app, "/cars/compare", { "X-API-Version": "2" });
    expect(missing.res.status).toBe(400);
    expect(missing.res.headers.get("vary")).toBe("X-API-Version");
    expect(missing.body).toEqual({ error: "month parameter required" });
    expect((await get(app, "/pqp", { "X-API-Version": "1" })).body).toEqual(v1Format);
  });

  it.each(["3", "v2", "", "1.0"])("refuses X-API-Version %j at the root in v1's format", async (value) => {
    const { res, body } = await get(app, "/coe", { "X-API-Version": value });
    expect(res.status).toBe(400);
    expect(res.headers.get("vary")).toBe("X-API-Version");
    expect(body).toEqual({
      error: {
        code: "UNSUPPORTED_VERSION",
        message: `API version ${JSON.stringify(value)} is not supported: use 1 or 2`,
        details: [{ field: "X-API-Version", message: "must be 1 or 2" }],
      },
    });
  });

  it("ignores the header on prefixed routes", async () => {
    const v1 = await get(app, "/v1/pqp?month=2021-03", { "X-API-Version": "2" });
    expect(v1.res.headers.get("x-api-version")).toBe("1");
    expect(v1.body).toEqual({ ...v1Format, count: 4 });
    const v2 = await get(app, "/v2/pqp?month=2021-03", { "X-API-Version": "banana" });
    expect(v2.res.status).toBe(200);
    expect(v2.res.headers.get("x-api-version")).toBe("2");
    expect(v2.body.meta).toEqual({ total: 4, page: 1, pageSize: 10 });
  });

  it("serves v2 at the root when DEFAULT_API_VERSION=2; /v1 and the header still reach v1", async () => {
    const root = await get(v2Default, "/coe/latest");
    expect(root.res.headers.get("x-api-version")).toBe("2");
    expect(root.body).toEqual({ ...v2Format, meta: { total: 5, page: 1, pageSize: 10 } });
    expect((await get(v2Default, "/coe/latest", { "X-API-Version": "1" })).body).toEqual({ ...v1Format, count: 5 });
    expect((await get(v2Default, "/v1/coe/latest")).body).toEqual({ ...v1Format, count: 5 });
    const health = await get(v2Default, "/health");
    expect(health.res.status).toBe(404);
    expect(health.body).toEqual({ detail: "Not Found" });
    expect((await get(v2Default, "/v1/health")).res.status).toBe(200);
    expect((await get(v2Default, "/health", { "X-API-Version": "1" })).res.status).toBe(200);
  });

  it("leaves unknown paths and other methods to the fallback", async () => {
    expect((await get(app, "/v2/health")).res.status).toBe(404);
    expect((await get(app, "/v3/cars")).body).toEqual({ detail: "Not Found" });
    for (const path of ["/v1/cars", "/v2/coe/latest", "/pqp", "/v1/health"]) {
      const res = await app.request(path, { method: "POST", json: {} });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET");
      expect(await res.json()).toEqual({ detail: "Method Not Allowed" });
    }
  });

  it("answers another method 405 whatever X-API-Version says: no version of the path has it", async () => {
    for (const version of ["1.0", "3", "2"]) {
      const res = await app.request("/coe/latest", { method: "POST", headers: { "X-API-Version": version } });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET");
      expect(res.headers.get("x-api-version")).toBe(version === "2" ? "2" : "1");
      expect(await res.json()).toEqual({ detail: "Method Not Allowed" });
    }
  });

  it("never reads a body: a malformed one cannot turn into another error format", async () => {
    const post = await app.request("/v2/cars", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(post.status).toBe(405);
    expect(await post.json()).toEqual({ detail: "Method Not Allowed" });
    const withBody = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      const req = request(`${app.baseUrl}/v1/pqp?month=2021-03`, {
        method: "GET",
        headers: { "content-type": "application/json", "content-length": "9" },
      });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode, body }));
      });
      req.on("error", reject);
      req.end("{not json");
    });
    expect(withBody.status).toBe(200);
    expect(JSON.parse(withBody.body).count).toBe(4);
  });

  it("matches paths as the REST routes do: any case, trailing slash", async () => {
    expect((await get(app, "/V2/Cars/Months/?limit=1")).body).toEqual({
      data: ["2021-01"],
      meta: { total: 61, page: 1, pageSize: 1 },
    });
  });
});

describe("deprecation of v1 (API_V1_SUNSET)", () => {
  it("adds no deprecation headers while unset", async () => {
    const { res } = await get(app, "/v1/cars/makes");
    expect(res.headers.get("x-api-deprecation")).toBeNull();
    expect(res.headers.get("x-api-sunset")).toBeNull();
    expect(res.headers.get("link")).toBeNull();
  });

  it("marks every v1 response, with the v2 successor and the query kept", async () => {
    const { res } = await get(sunset, "/v1/cars?month=2021-01&make=BMW");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-api-deprecation")).toBe("true");
    expect(res.headers.get("x-api-sunset")).toBe("2027-06-30");
    expect(res.headers.get("link")).toBe('</v2/cars?month=2021-01&make=BMW>; rel="successor-version"');
    const error = await get(sunset, "/v1/coe?month=13");
    expect(error.res.status).toBe(400);
    expect(error.res.headers.get("x-api-deprecation")).toBe("true");
    expect(error.res.headers.get("link")).toBe('</v2/coe?month=13>; rel="successor-version"');
  });

  it("marks the root while v1 is the default, but not v2", async () => {
    const root = await get(sunset, "/coe/latest");
    expect(root.res.headers.get("x-api-deprecation")).toBe("true");
    expect(root.res.headers.get("link")).toBe('</v2/coe/latest>; rel="successor-version"');
    const asV2 = await get(sunset, "/coe/latest", { "X-API-Version": "2" });
    expect(asV2.res.headers.get("x-api-deprecation")).toBeNull();
    expect(asV2.res.headers.get("x-api-sunset")).toBeNull();
    expect((await get(sunset, "/v2/coe/latest")).res.headers.get("x-api-deprecation")).toBeNull();
  });

  it("gives health no successor link: v2 has no health route", async () => {
    const { res } = await get(sunset, "/v1/health");
    expect(res.headers.get("x-api-deprecation")).toBe("true");
    expect(res.headers.get("x-api-sunset")).toBe("2027-06-30");
    expect(res.headers.get("link")).toBeNull();
  });
});

describe("renamed endpoints", () => {
  it.each([
    ["/v1/cars/list?month=2021-01&make=BMW", "/v2/cars?month=2021-01&make=BMW"],
    ["/v1/coe/pqp?vehicle_class=Category%20A", "/v2/pqp?vehicle_class=Category%20A"],
    ["/v1/cars/list", "/v2/cars"],
    ["/cars/list?month=2020-01", "/v2/cars?month=2020-01"],
  ])("%s answers 301 to %s", async (path, location) => {
    const res = await app.request(path, { redirect: "manual" });
    expect(res.status).toBe(301);
    expect(res.headers.get("location")).toBe(location);
    expect(res.headers.get("x-api-deprecated")).toBe("true");
    expect(res.headers.get("x-api-version")).toBe("1");
    expect(await res.text()).toBe("");
  });

  it("carries v1's deprecation headers once v1 has a sunset", async () => {
    const res = await sunset.request("/v1/coe/pqp?month=2021-03", { redirect: "manual" });
    expect(res.status).toBe(301);
    expect(res.headers.get("location")).toBe("/v2/pqp?month=2021-03");
    expect(res.headers.get("x-api-deprecated")).toBe("true");
    expect(res.headers.get("x-api-deprecation")).toBe("true");
    expect(res.headers.get("x-api-sunset")).toBe("2027-06-30");
    expect(res.headers.get("link")).toBe('</v2/pqp?month=2021-03>; rel="successor-version"');
  });

  it("at the root, refuses an unsupported X-API-Version with the 400 its operation documents", async () => {
    const res = await app.request("/coe/pqp", { headers: { "X-API-Version": "1.0" }, redirect: "manual" });
    expect(res.status).toBe(400);
    const body = await (await documentedBy(app))(res, "GET", "/coe/pqp");
    expect(JSON.parse(body)).toEqual({
      error: {
        code: "UNSUPPORTED_VERSION",
        message: 'API version "1.0" is not supported: use 1 or 2',
        details: [{ field: "X-API-Version", message: "must be 1 or 2" }],
      },
    });
  });

  it("does not exist in v2", async () => {
    expect((await app.request("/v2/cars/list", { redirect: "manual" })).status).toBe(404);
    expect((await app.request("/cars/list", { headers: { "X-API-Version": "2" }, redirect: "manual" })).status).toBe(
      404,
    );
  });
});

describe("caching", () => {
  it("tags each body strongly and answers 304 to a matching If-None-Match", async () => {
    const first = await get(app, "/v2/cars/makes");
    const tag = first.res.headers.get("etag");
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(first.res.headers.get("cache-control")).toBe("public, max-age=300");

    const cached = await app.request("/v2/cars/makes", { headers: { "If-None-Match": String(tag) } });
    expect(cached.status).toBe(304);
    expect(cached.headers.get("etag")).toBe(tag);
    expect(cached.headers.get("cache-control")).toBe("public, max-age=300");
    expect(cached.headers.get("x-api-version")).toBe("2");
    expect(await cached.text()).toBe("");

    const listed = await app.request("/v2/cars/makes", { headers: { "If-None-Match": `"other", W/${tag}` } });
    expect(listed.status).toBe(304);
  });

  it("answers 200 with the body to a stale tag, and tags other bodies differently", async () => {
    const current = await get(app, "/v1/pqp?month=2021-03");
    const stale = await get(app, "/v1/pqp?month=2021-03", { "If-None-Match": '"stale-tag"' });
    expect(stale.res.status).toBe(200);
    expect(stale.text).toBe(current.text);
    expect(stale.res.headers.get("etag")).toBe(current.res.headers.get("etag"));
    const other = await get(app, "/v1/pqp?month=2021-02");
    expect(other.res.headers.get("etag")).not.toBe(current.res.headers.get("etag"));
    const asV2 = await get(app, "/pqp?month=2021-03", { "X-API-Version": "2" });
    expect(asV2.res.headers.get("etag")).not.toBe(current.res.headers.get("etag"));
  });

  it("does not tag errors or the health check", async () => {
    const error = await get(app, "/v2/cars?page=0");
    expect(error.res.headers.get("etag")).toBeNull();
    expect(error.res.headers.get("cache-control")).toBeNull();
    const health = await get(app, "/v1/health");
    expect(health.res.headers.get("etag")).toBeNull();
    expect(health.res.headers.get("cache-control")).toBe("no-store");
  });
});

describe("typed procedures at /trpc", () => {
  it("serves each versioned route as a procedure with the same body", async () => {
    const input = encodeURIComponent(JSON.stringify({ month: "2025-06", vehicleClass: "Category B", limit: 1 }));
    const res = await app.request(`/trpc/data.v2.coe.list?input=${input}`);
    expect(res.status).toBe(200);
    const rest = await get(app, "/v2/coe?month=2025-06&vehicleClass=Category%20B&limit=1");
    expect(((await res.json()) as { result: { data: unknown } }).result.data).toEqual(rest.body);
  });
});

describe("the OpenAPI document", () => {
  it("lists v1, v2 and the root with each version's own schemas and errors", async () => {
    const { body } = await get(app, "/openapi.json");
    const v1 = body.paths["/v1/cars"].get;
    const v2 = body.paths["/v2/cars"].get;
    expect(v1.tags).toEqual(["v1 cars"]);
    expect(v2.tags).toEqual(["v2 cars"]);
    expect(v1.parameters.map((p: { name: string }) => p.name)).toEqual(["month", "make", "fuel_type", "vehicle_type"]);
    expect(v2.parameters.map((p: { name: string }) => p.name)).toEqual([
      "month",
      "make",
      "fuelType",
      "vehicleType",
      "page",
      "limit",
    ]);
    expect(v1.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/V1CarRegistrationList",
    });
    expect(v2.responses["400"]).toEqual({ $ref: "#/components/responses/V2BadRequest" });
    expect(v1.responses["304"]).toEqual({ $ref: "#/components/responses/NotModified" });
    expect(body.paths["/v1/health"].get.responses["503"]).toEqual({
      $ref: "#/components/responses/HealthUnavailable",
    });
    expect(Object.keys(body.paths["/v1/cars/list"].get.responses)).toEqual(["301", "405"]);
    expect(body.paths["/cars"].get.parameters.at(-1)).toMatchObject({ in: "header", name: "X-API-Version" });
    expect(body.paths["/v2/health"]).toBeUndefined();
    expect(v1.deprecated).toBeUndefined();
    const deprecated = (await get(sunset, "/openapi.json")).body;
    expect(deprecated.paths["/v1/cars"].get.deprecated).toBe(true);
    expect(deprecated.paths["/v2/cars"].get.deprecated).toBeUndefined();
  });
});
