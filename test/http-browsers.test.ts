import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";

// docs/http.md at the HTTP level: CORS, security headers, HEAD. The browser
// test (test/browser/cors.test.ts) shows what Chromium makes of it.
const allowed = "https://app.example.com";
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ CORS_ORIGINS: `${allowed}, http://localhost:5173` });
});
afterAll(() => app.close());

const csp =
  "default-src 'self';script-src 'self';style-src 'self' 'unsafe-inline';img-src 'self' data:;" +
  "font-src 'self' data:;connect-src 'self';worker-src 'self' blob:;object-src 'none';base-uri 'self';" +
  "form-action 'self';frame-ancestors 'none'";

const preflight = (target: TestApp, path: string, origin: string) =>
  target.request(path, {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type,idempotency-key",
    },
  });

describe("CORS", () => {
  it("answers a preflight from an allowed origin with 204, the methods and the headers the API reads", async () => {
    const res = await preflight(app, "/agents", allowed);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect(res.headers.get("access-control-allow-origin")).toBe(allowed);
    expect(res.headers.get("access-control-allow-methods")).toBe("GET,HEAD,POST,PUT,PATCH,DELETE");
    expect(res.headers.get("access-control-allow-headers")).toBe(
      "Authorization,X-API-Key,Content-Type,Idempotency-Key,If-Match,If-None-Match,X-API-Version,X-Request-Id,Last-Event-ID",
    );
    expect(res.headers.get("access-control-max-age")).toBe("600");
    expect(res.headers.get("vary")).toBe("Origin");
  });

  it("gives another origin no Access-Control headers, so its browser refuses", async () => {
    const res = await preflight(app, "/agents", "https://evil.example.com");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const get = await app.request("/agents", { headers: { Origin: "https://evil.example.com" } });
    expect(get.status).toBe(200);
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("exposes the headers a client reads on a real request", async () => {
    const res = await app.request("/agents", {
      method: "POST",
      json: { name: "cors", type: "worker" },
      headers: { Origin: allowed },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("access-control-allow-origin")).toBe(allowed);
    expect(res.headers.get("access-control-expose-headers")).toBe(
      "Location,ETag,Link,X-Total-Count,RateLimit,RateLimit-Policy,Retry-After,X-Request-Id,X-API-Version," +
        "Idempotent-Replayed,X-API-Deprecation,X-API-Deprecated,X-API-Sunset",
    );
  });

  it("with CORS_ORIGINS=* allows any origin; unset, none, and OPTIONS is the route's 405", async () => {
    const any = await startTestApp({ CORS_ORIGINS: "*" });
    const none = await startTestApp();
    try {
      const res = await preflight(any, "/agents", "https://anywhere.example.org");
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const refused = await preflight(none, "/agents", allowed);
      expect(refused.status).toBe(405);
      expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await any.close();
      await none.close();
    }
  });

  it("refuses a CORS_ORIGINS that is not a list of origins, naming the setting", async () => {
    await expect(startTestApp({ CORS_ORIGINS: "app.example.com" })).rejects.toThrow(
      "Invalid configuration: CORS_ORIGINS must be * or origins separated by commas, such as https://app.example.com",
    );
  });
});

describe("security headers", () => {
  it.each(["/agents", "/docs", "/redoc", "/openapi.json", "/nowhere", "/cars", "/trpc/agents.list"])(
    "are on %s, with no X-Powered-By",
    async (path) => {
      const res = await app.request(path);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("content-security-policy")).toBe(csp);
      expect(res.headers.get("x-powered-by")).toBeNull();
    },
  );
});

describe("HEAD", () => {
  it("answers wherever GET does: same status and headers, no body", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const document = (await (await app.request("/openapi.json")).json()) as { paths: Record<string, { get?: object }> };
    const paths = Object.entries(document.paths)
      .filter(([, item]) => item.get)
      .map(([path]) =>
        path
          .replace("{agent_id}", agent.id)
          .replace("{task_id}", task.id)
          .replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000"),
      );
    expect(paths.length).toBeGreaterThan(20);
    for (const path of [...paths, "/docs", "/redoc", "/openapi.json", "/nowhere"]) {
      const get = await app.request(path);
      // A stream's body never ends: its head is what HEAD must match.
      if (get.headers.get("content-type")?.startsWith("text/event-stream")) await get.body?.cancel();
      else await get.arrayBuffer();
      const head = await app.request(path, { method: "HEAD" });
      expect({ path, status: head.status }).toEqual({ path, status: get.status });
      for (const name of ["content-type", "content-length", "etag", "location", "allow", "x-api-version"]) {
        expect({ path, name, value: head.headers.get(name) }).toEqual({ path, name, value: get.headers.get(name) });
      }
      expect(await head.text()).toBe("");
    }
  });
});
