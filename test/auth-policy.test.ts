import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { bearer, createUser, tokenFor } from "./helpers/auth.js";
import { createAgent } from "./helpers/factories.js";

const apiKeys = ["first-key-0123456789", "second-key-abcdefghij"];
const agentBody = { name: "Scout", type: "worker" };

async function expectStatus(res: Response, status: number, body?: unknown) {
  expect(res.status).toBe(status);
  if (status === 401) expect(res.headers.get("www-authenticate")).toBe("Bearer");
  if (body !== undefined) expect(await res.json()).toEqual(body);
}

const notAuthenticated = { detail: "Not authenticated" };
const couldNotValidate = { detail: "Could not validate credentials" };
const invalidKey = { detail: "Invalid API key" };

function policyApp(policy: string) {
  const state = { app: undefined as unknown as TestApp, token: "" };
  beforeAll(async () => {
    state.app = await startTestApp({ AUTH_POLICY: policy, API_KEYS: apiKeys.join(" , ") });
    state.token = await tokenFor(state.app, await createUser(state.app));
  });
  afterAll(() => state.app.close());
  return state;
}

describe("AUTH_POLICY=writes", () => {
  const s = policyApp("writes");

  it("lets anyone read", async () => {
    await expectStatus(await s.app.request("/agents"), 200);
  });

  it("is 401 Not authenticated for a write without credentials", async () => {
    await expectStatus(await s.app.request("/agents", { method: "POST", json: agentBody }), 401, notAuthenticated);
  });

  it("judges credentials before the body: an invalid body without credentials is 401", async () => {
    await expectStatus(await s.app.request("/agents", { method: "POST", json: {} }), 401, notAuthenticated);
  });

  it("is 403 for a wrong API key", async () => {
    const res = await s.app.request("/agents", { method: "POST", json: agentBody, headers: { "x-api-key": "nope" } });
    await expectStatus(res, 403, invalidKey);
  });

  it("accepts any configured API key", async () => {
    for (const key of apiKeys) {
      const res = await s.app.request("/agents", { method: "POST", json: agentBody, headers: { "x-api-key": key } });
      await expectStatus(res, 201);
    }
  });

  it("accepts a user's bearer token", async () => {
    await expectStatus(
      await s.app.request("/agents", { method: "POST", json: agentBody, headers: bearer(s.token) }),
      201,
    );
  });

  it("is 401 Could not validate credentials for a bad token, even beside a good API key", async () => {
    const headers = { ...bearer(`${s.token}x`), "x-api-key": apiKeys[0] as string };
    await expectStatus(
      await s.app.request("/agents", { method: "POST", json: agentBody, headers }),
      401,
      couldNotValidate,
    );
  });

  it("is 403 for a bad API key, even beside a good token", async () => {
    const headers = { ...bearer(s.token), "x-api-key": "nope" };
    await expectStatus(await s.app.request("/agents", { method: "POST", json: agentBody, headers }), 403, invalidKey);
  });

  it("guards PUT and DELETE too", async () => {
    const agent = await createAgentWith(s.app, { "x-api-key": apiKeys[0] as string });
    const path = `/agents/${agent.id}`;
    await expectStatus(await s.app.request(path, { method: "PUT", json: agentBody }), 401, notAuthenticated);
    await expectStatus(await s.app.request(path, { method: "DELETE" }), 401, notAuthenticated);
    await expectStatus(await s.app.request(path, { method: "DELETE", headers: bearer(s.token) }), 204);
  });

  it("applies to the typed RPC transport as well", async () => {
    const res = await s.app.request("/trpc/agents.create", { method: "POST", json: agentBody });
    expect(res.status).toBe(401);
    const ok = await s.app.request("/trpc/agents.create", {
      method: "POST",
      json: agentBody,
      headers: { "x-api-key": apiKeys[1] as string },
    });
    expect(ok.status).toBe(200);
  });
});

describe("AUTH_POLICY=all", () => {
  const s = policyApp("all");

  it("is 401 Not authenticated for a read without credentials", async () => {
    await expectStatus(await s.app.request("/agents"), 401, notAuthenticated);
    await expectStatus(await s.app.request("/agents/00000000-0000-4000-8000-000000000000"), 401, notAuthenticated);
  });

  it("is 403 for a wrong API key", async () => {
    await expectStatus(await s.app.request("/agents", { headers: { "x-api-key": "nope" } }), 403, invalidKey);
  });

  it("lets a right API key or a right token read and write", async () => {
    await expectStatus(await s.app.request("/agents", { headers: { "x-api-key": apiKeys[0] as string } }), 200);
    await expectStatus(await s.app.request("/agents", { headers: bearer(s.token) }), 200);
    const agent = await createAgentWith(s.app, bearer(s.token));
    await expectStatus(await s.app.request(`/agents/${agent.id}`, { headers: bearer(s.token) }), 200);
  });

  it("is 401 Could not validate credentials for a bad token", async () => {
    await expectStatus(await s.app.request("/agents", { headers: bearer("garbage") }), 401, couldNotValidate);
  });
});

describe("AUTH_POLICY=open", () => {
  const s = policyApp("open");

  it("needs no credentials for agents", async () => {
    const agent = await createAgent(s.app);
    await expectStatus(await s.app.request(`/agents/${agent.id}`, { method: "DELETE" }), 204);
  });

  it("judges credentials that are sent, even where none are needed: they choose the project", async () => {
    await expectStatus(
      await s.app.request("/agents", { method: "POST", json: agentBody, headers: bearer("garbage") }),
      401,
      {
        detail: "Could not validate credentials",
      },
    );
    const badKey = { "x-api-key": "nope" };
    await expectStatus(await s.app.request("/agents", { method: "POST", json: agentBody, headers: badKey }), 403, {
      detail: "Invalid API key",
    });
    await expectStatus(await s.app.request("/agents", { method: "POST", json: agentBody }), 201);
  });

  it("still needs a bearer token for /protected", async () => {
    await expectStatus(await s.app.request("/protected"), 401, notAuthenticated);
    await expectStatus(await s.app.request("/protected", { headers: bearer(s.token) }), 200);
  });
});

async function createAgentWith(app: TestApp, headers: Record<string, string>): Promise<{ id: string }> {
  const res = await app.request("/agents", { method: "POST", json: agentBody, headers });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
}
