// docs/http.md in one process: RATE_LIMIT_PER_MINUTE per sender, the IETF
// RateLimit fields on every counted response, 429 in each route's format, the
// calls of a tRPC batch counted one each, TRUST_PROXY for the address.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { bearer, createUser, tokenFor } from "./helpers/auth.js";

const LIMIT = 4;
// A busy shared machine can stall this process past admission's lag bound; shedding is not what is tested here.
const patientUnderLoad = { MAX_EVENT_LOOP_DELAY_MS: "60000" };
const apiKey = "rate-limit-test-key";
const policy = `"default";q=${LIMIT};w=60`;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp(
    { RATE_LIMIT_PER_MINUTE: String(LIMIT), API_KEYS: apiKey, TRUST_PROXY: "loopback", ...patientUnderLoad },
    { sampleData: true },
  );
});
afterAll(() => app.close());

/** Each test is its own client: a distinct address, forwarded by the (trusted) loopback proxy. */
let clients = 0;
const newClient = () => ({ "x-forwarded-for": `198.51.100.${++clients}` });

/** `r` and `t` of the RateLimit field, which must be well formed. */
function rateLimit(res: Response) {
  expect(res.headers.get("ratelimit-policy")).toBe(policy);
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(res.headers.get("ratelimit") ?? "");
  expect(match, `RateLimit: ${res.headers.get("ratelimit")}`).not.toBeNull();
  const [remaining, reset] = [Number(match?.[1]), Number(match?.[2])];
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(60);
  return { remaining, reset };
}

/** A 429's Retry-After, which must agree with the RateLimit field's reset. */
function retryAfterOf(res: Response) {
  expect(res.status).toBe(429);
  const { remaining, reset } = rateLimit(res);
  expect(remaining).toBe(0);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBe(reset);
  return retryAfter;
}

async function spend(path: string, headers: Record<string, string>, times: number) {
  const remaining: number[] = [];
  for (let i = 0; i < times; i++) {
    const res = await app.request(path, { headers });
    expect(res.status).toBe(200);
    remaining.push(rateLimit(res).remaining);
  }
  return remaining;
}

describe("RATE_LIMIT_PER_MINUTE", () => {
  it("announces the policy and what remains on every response, then answers 429 with Retry-After", async () => {
    const client = newClient();
    expect(await spend("/agents", client, LIMIT)).toEqual([3, 2, 1, 0]);
    const res = await app.request("/agents", { headers: client });
    const retryAfter = retryAfterOf(res);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toEqual({
      error: "rate_limited",
      message: "Too many requests; try again later",
      details: { retry_after_s: retryAfter },
    });
  });

  it("counts every limited operation and every status, and refuses writes as reads", async () => {
    const client = newClient();
    const created = await app.request("/agents", {
      method: "POST",
      headers: client,
      json: { name: "counted", type: "worker" },
    });
    expect(created.status).toBe(201);
    expect(rateLimit(created).remaining).toBe(3);
    const missing = await app.request("/agents/00000000-0000-4000-8000-000000000000", { headers: client });
    expect(missing.status).toBe(404);
    expect(rateLimit(missing).remaining).toBe(2);
    const invalid = await app.request("/agents?limit=-1", { headers: client });
    expect(invalid.status).toBe(400);
    expect(rateLimit(invalid).remaining).toBe(1);
    await spend("/agents", client, 1);
    const refused = await app.request("/agents", {
      method: "POST",
      headers: client,
      json: { name: "refused", type: "worker" },
    });
    retryAfterOf(refused);
    const listed = (await (await app.request("/agents?limit=1000", { headers: newClient() })).json()) as {
      name: string;
    }[];
    expect(listed.map((agent) => agent.name)).not.toContain("refused");
  });

  it("answers 429 in each data version's format on the versioned routes", async () => {
    const client = newClient();
    await spend("/v1/pqp", client, LIMIT);
    const v1 = await app.request("/v1/pqp", { headers: client });
    expect(await v1.json()).toEqual({
      error: { code: "RATE_LIMITED", message: "Too many requests; try again later", details: [] },
    });
    retryAfterOf(v1);
    const v2 = await app.request("/v2/pqp", { headers: client });
    retryAfterOf(v2);
    expect(await v2.json()).toEqual({ error: "Too many requests; try again later" });
  });

  it("counts per sender: each user and each API key apart from the address they call from", async () => {
    const client = newClient();
    await spend("/agents", client, LIMIT);
    const token = await tokenFor(app, await createUser(app));
    expect(await spend("/agents", { ...client, ...bearer(token) }, 2)).toEqual([3, 2]);
    expect(await spend("/agents", { ...client, "x-api-key": apiKey }, 1)).toEqual([3]);
    // A credential that is not valid buys no budget of its own: it counts against its address.
    retryAfterOf(await app.request("/agents", { headers: { ...client, ...bearer("not.a.token") } }));
    retryAfterOf(await app.request("/agents", { headers: { ...client, "x-api-key": "made-up" } }));
  });

  it("leaves the health check, the token endpoint and the documents alone", async () => {
    const client = newClient();
    await spend("/agents", client, LIMIT);
    for (const path of ["/health", "/v1/health", "/openapi.json"]) {
      const res = await app.request(path, { headers: client });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("ratelimit"), path).toBeNull();
    }
  });
});

describe("RATE_LIMIT_PER_MINUTE over /trpc", () => {
  const batch = (calls: number) =>
    `/trpc/${Array.from({ length: calls }, () => "agents.list").join(",")}?batch=1&input=${encodeURIComponent(
      JSON.stringify(Object.fromEntries(Array.from({ length: calls }, (_, i) => [i, {}]))),
    )}`;

  it("counts each call of a batch, and refuses every call of a batch over the limit", async () => {
    const client = newClient();
    const first = await app.request(batch(3), { headers: client });
    expect(first.status).toBe(200);
    expect(rateLimit(first).remaining).toBe(1);
    const over = await app.request(batch(2), { headers: client });
    const retryAfter = retryAfterOf(over);
    const refusal = {
      code: -32029,
      message: "Too many requests; try again later",
      data: {
        code: "TOO_MANY_REQUESTS",
        httpStatus: 429,
        path: "agents.list",
        error: "rate_limited",
        details: { retry_after_s: retryAfter },
      },
    };
    expect(await over.json()).toEqual([{ error: refusal }, { error: refusal }]);
  });

  it("counts an encoded comma as tRPC does: it separates calls too", async () => {
    const client = newClient();
    const input = encodeURIComponent(JSON.stringify({ 0: {}, 1: {}, 2: {}, 3: {} }));
    const res = await app.request(`/trpc/agents.list%2Cagents.list%2cagents.list,agents.list?batch=1&input=${input}`, {
      headers: client,
    });
    expect(res.status).toBe(200);
    expect(rateLimit(res).remaining).toBe(0);
  });
});

describe("TRUST_PROXY", () => {
  it("takes the nearest untrusted X-Forwarded-For hop, so a client cannot choose its address", async () => {
    const client = newClient()["x-forwarded-for"];
    await spend("/agents", { "x-forwarded-for": client }, LIMIT);
    // What the client wrote is to the left of what the trusted proxy appended.
    for (const spoofed of ["203.0.113.7", "127.0.0.1", "garbage"]) {
      retryAfterOf(await app.request("/agents", { headers: { "x-forwarded-for": `${spoofed}, ${client}` } }));
    }
    // Trusted hops are walked past: behind two loopback proxies it is still the same client.
    retryAfterOf(await app.request("/agents", { headers: { "x-forwarded-for": `${client}, 127.0.0.1` } }));
  });
});

describe("RATE_LIMIT_PER_MINUTE and TRUST_PROXY settings", () => {
  it.each([
    ["TRUST_PROXY", "proxy.example.com"],
    ["TRUST_PROXY", "10.0.0.0/33"],
    ["RATE_LIMIT_PER_MINUTE", "-1"],
    ["RATE_LIMIT_PER_MINUTE", "ten"],
  ])("refuses %s=%s with one line naming it", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} \\S`));
  });

  it("reads hop counts, lists and names as express does", () => {
    const trust = (setting: string) => loadConfig({ TRUST_PROXY: setting }).trustProxy;
    expect(trust("2")?.("203.0.113.1", 1)).toBe(true);
    expect(trust("2")?.("203.0.113.1", 2)).toBe(false);
    expect(trust("loopback, 10.0.0.0/8")?.("10.1.2.3", 0)).toBe(true);
    expect(trust("loopback, 10.0.0.0/8")?.("203.0.113.1", 0)).toBe(false);
    expect(trust("true")?.("203.0.113.1", 9)).toBe(true);
    expect(trust("false")?.("127.0.0.1", 0)).toBe(false);
    expect(loadConfig({}).trustProxy).toBeUndefined();
    expect(loadConfig({}).rateLimitPerMinute).toBe(0);
  });
});

describe("the document with RATE_LIMIT_PER_MINUTE on", () => {
  type Operation = { responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }> };
  let paths: Record<string, Record<string, Operation>>;
  beforeAll(async () => {
    paths = ((await (await app.request("/openapi.json")).json()) as { paths: typeof paths }).paths;
  });
  const limitHeaders = {
    "RateLimit-Policy": { $ref: "#/components/headers/RateLimitPolicy" },
    RateLimit: { $ref: "#/components/headers/RateLimit" },
  };

  it("documents the 429 of every counted operation in its format, and the fields on its successes", () => {
    const listAgents = paths["/agents"]?.get as Operation;
    expect(listAgents.responses["429"]).toEqual({ $ref: "#/components/responses/RateLimited" });
    expect(listAgents.responses["200"]?.headers).toMatchObject(limitHeaders);
    expect(paths["/v1/pqp"]?.get?.responses["429"]).toEqual({ $ref: "#/components/responses/V1RateLimited" });
    expect(paths["/v2/pqp"]?.get?.responses["429"]).toEqual({ $ref: "#/components/responses/V2RateLimited" });
  });

  it("documents no limit where nothing is counted", () => {
    expect(paths["/health"]?.get?.responses["429"]).toBeUndefined();
    expect(paths["/token"]?.post?.responses["429"]).toEqual({ $ref: "#/components/responses/TooManyRequests" });
    expect(paths["/token"]?.post?.responses["200"]?.headers).not.toHaveProperty("RateLimit");
  });
});
