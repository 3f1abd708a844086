import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent } from "./helpers/factories.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ BODY_LIMIT: "2kb" });
});
afterAll(() => app.close());

const post = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
  app.request("/agents", { method: "POST", body, headers: { "content-type": "application/json", ...headers } });

async function expectValidationError(res: Response, field: string) {
  expect(res.status).toBe(400);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  const body = (await res.json()) as { error: string; message: string; details: { issues: { field: string }[] } };
  expect(body.error).toBe("validation_error");
  expect(typeof body.message).toBe("string");
  expect(body.details.issues.map((i) => i.field)).toContain(field);
}

const agentCount = async () => app.database.db.prisma.agent.count();

describe("request bodies", () => {
  it("ignores unknown fields: not stored, not echoed", async () => {
    const res = await post(JSON.stringify({ name: "a", type: "worker", status: "running", id: "x", color: "red" }));
    expect(res.status).toBe(201);
    const agent = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(agent).sort()).toEqual([
      "concurrency",
      "created_at",
      "id",
      "metadata",
      "name",
      "status",
      "type",
      "updated_at",
      "version",
    ]);
    expect(agent.status).toBe("idle");
    expect(agent.id).not.toBe("x");
  });

  it("malformed JSON is a 400 validation error and stores nothing", async () => {
    const before = await agentCount();
    await expectValidationError(await post('{"name": "a", "type": '), "body");
    await expectValidationError(await post("{'name': 'a'}"), "body");
    expect(await agentCount()).toBe(before);
  });

  it("a body that is not UTF-8 is a 400, never silently repaired", async () => {
    const before = await agentCount();
    const bytes = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('","type":"worker"}')]);
    await expectValidationError(await post(bytes), "body");
    expect(await agentCount()).toBe(before);
  });

  it("a body over BODY_LIMIT is 413 payload_too_large", async () => {
    const res = await post(JSON.stringify({ name: "a", type: "worker", pad: "x".repeat(4096) }));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "payload_too_large", message: "Request body is too large" });
  });

  it("a body that is not JSON is 415", async () => {
    const res = await app.request("/agents", {
      method: "POST",
      body: "name=a",
      headers: { "content-type": "text/plain" },
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: string }).error).toBe("unsupported_media_type");
  });
});

describe("text fields", () => {
  it("count Unicode code points: 100 emoji fit, 101 do not", async () => {
    const ok = await post(JSON.stringify({ name: "😀".repeat(100), type: "worker" }));
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as { name: string }).name).toBe("😀".repeat(100));
    await expectValidationError(await post(JSON.stringify({ name: "😀".repeat(101), type: "worker" })), "name");
  });

  it("reject lone surrogates and NUL with 400, and store nothing", async () => {
    const before = await agentCount();
    await expectValidationError(await post('{"name":"a\\ud800b","type":"worker"}'), "name");
    await expectValidationError(await post('{"name":"\\udc00","type":"worker"}'), "name");
    await expectValidationError(await post('{"name":"a\\u0000b","type":"worker"}'), "name");
    expect(await agentCount()).toBe(before);
  });

  it("keep any other Unicode exactly", async () => {
    const name = "Zoë 🤖 \u200d 日本語 \u{10FFFF}";
    const agent = await createAgent(app, { name });
    expect(agent.name).toBe(name);
    expect(((await (await app.request(`/agents/${agent.id}`)).json()) as { name: string }).name).toBe(name);
  });
});

describe("X-Request-Id", () => {
  it("echoes a sane client id and logs it on the request's line", async () => {
    const res = await app.request("/agents", { headers: { "x-request-id": "abc-123.def" } });
    expect(res.headers.get("x-request-id")).toBe("abc-123.def");
    await expect
      .poll(() => app.logs.find((l) => l.request_id === "abc-123.def"))
      .toMatchObject({
        msg: "request",
        method: "GET",
        path: "/agents",
        status: 200,
        duration_ms: expect.any(Number),
      });
  });

  it("generates one for a missing or insane id, on every kind of response", async () => {
    for (const [path, headers] of [
      ["/agents", {}],
      ["/nowhere", { "x-request-id": "bad id with spaces" }],
      ["/agents/x", { "x-request-id": "x".repeat(300) }],
    ] as const) {
      const res = await app.request(path, { headers });
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe("unknown routes and methods", () => {
  it("unknown path: 404 Not Found", async () => {
    for (const path of ["/", "/agent", "/agents/x/y/z", "/trpcx"]) {
      const res = await app.request(path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await res.json()).toEqual({ detail: "Not Found" });
    }
  });

  it("known path, wrong method: 405 with Allow", async () => {
    const cases = [
      ["PATCH", "/agents", "GET, POST"],
      ["DELETE", "/agents", "GET, POST"],
      ["POST", "/agents/00000000-0000-4000-8000-000000000000", "GET, PUT, PATCH, DELETE"],
      ["POST", "/openapi.json", "GET"],
    ] as const;
    for (const [method, path, allow] of cases) {
      const res = await app.request(path, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")?.split(", ").sort()).toEqual(allow.split(", ").sort());
      expect(await res.json()).toEqual({ detail: "Method Not Allowed" });
    }
  });
});

describe("responses", () => {
  it("timestamps are ISO 8601 UTC with milliseconds", async () => {
    const agent = await createAgent(app);
    expect(agent.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(agent.created_at) - Date.now())).toBeLessThan(60_000);
  });

  it("an aborted request body does not crash the server", async () => {
    const { port } = new URL(app.baseUrl);
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/agents",
        headers: { "content-type": "application/json", "content-length": "1000" },
      });
      req.on("error", () => resolve());
      req.write('{"name":"a"');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 50);
    });
    expect((await app.request("/agents?limit=1")).status).toBe(200);
  });
});
