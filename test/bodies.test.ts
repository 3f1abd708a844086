import { deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createUser, type TestUser } from "./helpers/auth.js";
import { createAgent } from "./helpers/factories.js";

// Bodies are read one way for REST, /token and /trpc (src/http/body.ts); a
// body that cannot be read is a 4xx in the format of the route it was sent to.
let app: TestApp;
let user: TestUser;
beforeAll(async () => {
  app = await startTestApp({ BODY_LIMIT: "256kb" });
  user = await createUser(app);
});
afterAll(() => app.close());

const agentJson = JSON.stringify({ name: "compressed", type: "worker" });
const codings = [
  ["gzip", gzipSync(agentJson)],
  ["deflate", deflateSync(agentJson)],
  ["GZIP", gzipSync(agentJson)],
  // A coding the body does not even use is refused just the same: nothing is guessed.
  ["gzip", Buffer.from(agentJson)],
] as const;

const agentCount = async () => ((await (await app.request("/agents?limit=1000")).json()) as unknown[]).length;

/** tRPC's error envelope for one call, with the data every tRPC error carries (docs/clients.md). */
const trpcError = (code: string, httpStatus: number, error: string, path = "agents.create") => ({
  error: {
    message: expect.any(String),
    code: expect.any(Number),
    data: expect.objectContaining({ code, httpStatus, path, error }),
  },
});

describe("a compressed body (Content-Encoding)", () => {
  it.each(codings)("%s is 415 with Accept-Encoding: identity on REST, and changes nothing", async (coding, bytes) => {
    const before = await agentCount();
    const agent = await createAgent(app);
    for (const [method, path] of [
      ["POST", "/agents"],
      ["PUT", `/agents/${agent.id}`],
      ["PATCH", `/agents/${agent.id}`],
      ["POST", `/agents/${agent.id}/tasks`],
    ] as const) {
      const res = await app.request(path, {
        method,
        body: bytes,
        headers: { "content-type": "application/json", "content-encoding": coding },
      });
      expect(res.status, `${method} ${path}`).toBe(415);
      expect(res.headers.get("accept-encoding")).toBe("identity");
      expect(await res.json()).toEqual({
        error: "unsupported_media_type",
        message: `Content-Encoding ${coding.toLowerCase()} is not supported: send the body uncompressed`,
      });
    }
    expect(await agentCount()).toBe(before + 1);
    expect(await (await app.request(`/agents/${agent.id}`)).json()).toEqual(agent);
  });

  it("identity is no coding at all", async () => {
    const res = await app.request("/agents", {
      method: "POST",
      body: agentJson,
      headers: { "content-type": "application/json", "content-encoding": "identity" },
    });
    expect(res.status).toBe(201);
  });

  it.each(codings)("%s is 415 in the REST format on /token", async (coding, bytes) => {
    const form = `username=${encodeURIComponent(user.email)}&password=${encodeURIComponent(user.password)}`;
    const res = await app.request("/token", {
      method: "POST",
      body: coding === "deflate" ? deflateSync(form) : gzipSync(form),
      headers: { "content-type": "application/x-www-form-urlencoded", "content-encoding": coding },
    });
    expect(bytes.length).toBeGreaterThan(0);
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-encoding")).toBe("identity");
    expect(((await res.json()) as { error: string }).error).toBe("unsupported_media_type");
  });

  it.each(codings)("%s is 415 in tRPC's format on /trpc", async (coding, bytes) => {
    const before = await agentCount();
    const res = await app.request("/trpc/agents.create", {
      method: "POST",
      body: bytes,
      headers: { "content-type": "application/json", "content-encoding": coding },
    });
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toEqual(trpcError("UNSUPPORTED_MEDIA_TYPE", 415, "unsupported_media_type"));
    expect(await agentCount()).toBe(before);
  });
});

describe("POST /token with too many form fields", () => {
  const form = (fields: number) =>
    [
      `username=${encodeURIComponent(user.email)}`,
      `password=${encodeURIComponent(user.password)}`,
      ...Array.from({ length: fields - 2 }, (_, i) => `f${i}=1`),
    ].join("&");
  const post = (body: string) =>
    app.request("/token", { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } });

  it("1,001 fields is 413 in the REST format", async () => {
    const res = await post(form(1001));
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toEqual({ error: "payload_too_large", message: "Too many fields: at most 1000" });
  });

  it("1,000 fields is a form like any other", async () => {
    const res = await post(form(1000));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { token_type: string }).token_type).toBe("bearer");
  });
});

describe("bodies /trpc cannot read", () => {
  const post = (body: string | Buffer, path = "agents.create", headers: Record<string, string> = {}) =>
    app.request(`/trpc/${path}`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });

  it("malformed JSON is a 400 in tRPC's format, never the REST body nor the parser's words", async () => {
    const res = await post('{"name": "a", "type": ');
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toEqual(trpcError("BAD_REQUEST", 400, "validation_error"));
    expect(body).not.toHaveProperty("detail");
    expect((body as { error: { data: unknown } }).error.data).toMatchObject({
      details: { issues: [{ field: "input", message: "Malformed JSON" }] },
    });
  });

  it("malformed JSON in a batch is an error for each call", async () => {
    const res = await post("{not json", "agents.create,agents.create?batch=1");
    expect(res.status).toBe(400);
    const body = (await res.json()) as unknown[];
    expect(body).toHaveLength(2);
    for (const call of body) expect(call).toEqual(trpcError("BAD_REQUEST", 400, "validation_error"));
  });

  it("bytes that are not UTF-8 are a 400, never silently replaced", async () => {
    const before = await agentCount();
    const bytes = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('","type":"worker"}')]);
    const res = await post(bytes);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(trpcError("BAD_REQUEST", 400, "validation_error"));
    expect(await agentCount()).toBe(before);
  });

  it("a body over BODY_LIMIT is 413 in tRPC's format", async () => {
    const res = await post(JSON.stringify({ name: "x".repeat(300_000), type: "worker" }));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(trpcError("PAYLOAD_TOO_LARGE", 413, "payload_too_large"));
  });

  it("a body nested thousands of levels deep is a 400, not a 500", async () => {
    const deep = `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`;
    const res = await post(`{"title":"t","input":${deep},"agent_id":"x"}`, "tasks.create");
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(trpcError("BAD_REQUEST", 400, "validation_error", "tasks.create"));
  });
});
