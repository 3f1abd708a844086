import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent } from "./helpers/factories.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const notFound = { detail: "Agent not found" };
const missingId = "00000000-0000-4000-8000-000000000000";

describe("POST /agents", () => {
  it("creates an idle agent: 201, Location, the Agent body", async () => {
    const res = await app.request("/agents", { method: "POST", json: { name: "Scout", type: "assistant" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const agent = (await res.json()) as AgentOut;
    expect(res.headers.get("location")).toBe(`/agents/${agent.id}`);
    expect(agent).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: "Scout",
      type: "assistant",
      status: "idle",
      created_at: expect.stringMatching(iso),
      updated_at: agent.created_at,
      version: 1,
      metadata: {},
      concurrency: { max_running: null, max_running_per_key: null },
    });
  });

  it("is not idempotent: the same body twice makes two agents", async () => {
    const first = await createAgent(app, { name: "twin" });
    const second = await createAgent(app, { name: "twin" });
    expect(second.id).not.toBe(first.id);
  });

  it.each([
    [{ type: "worker" }, "name"],
    [{ name: "x" }, "type"],
    [{ name: "", type: "worker" }, "name"],
    [{ name: "x", type: "Worker" }, "type"],
    [{ name: "x", type: "robot" }, "type"],
    [{ name: 5, type: "worker" }, "name"],
    [{ name: "x".repeat(101), type: "worker" }, "name"],
  ])("rejects %j with 400 naming %s", async (body, field) => {
    const res = await app.request("/agents", { method: "POST", json: body });
    expect(res.status).toBe(400);
    const error = (await res.json()) as { error: string; message: string; details: { issues: { field: string }[] } };
    expect(error.error).toBe("validation_error");
    expect(error.message).toEqual(expect.any(String));
    expect(error.details.issues.map((i) => i.field)).toEqual([field]);
  });

  it("accepts a name of exactly 100 characters", async () => {
    const agent = await createAgent(app, { name: "n".repeat(100) });
    expect(agent.name).toHaveLength(100);
  });

  it("rejects a body that is not an object", async () => {
    for (const body of [[], "agent", 42, null]) {
      const res = await app.request("/agents", { method: "POST", json: body });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("validation_error");
    }
  });
});

describe("GET /agents", () => {
  it("lists agents ordered by created_at then id, with skip and limit", async () => {
    const list = async (query: string) => {
      const res = await app.request(`/agents${query}`);
      expect(res.status).toBe(200);
      return (await res.json()) as { id: string; created_at: string }[];
    };
    await createAgent(app, { name: "one" });
    await createAgent(app, { name: "two" });
    const all = await list("?limit=1000");
    const sorted = [...all].sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1,
    );
    expect(all.map((a) => a.id)).toEqual(sorted.map((a) => a.id));
    expect(await list("?skip=1&limit=2")).toEqual(all.slice(1, 3));
    expect(await list("?skip=100000")).toEqual([]);
  });

  it("defaults to 100 items", async () => {
    const res = await app.request("/agents");
    expect(((await res.json()) as unknown[]).length).toBeLessThanOrEqual(100);
  });

  it("filters by status", async () => {
    const res = await app.request("/agents?status=idle");
    const agents = (await res.json()) as { status: string }[];
    expect(agents.length).toBeGreaterThan(0);
    expect(agents.every((a) => a.status === "idle")).toBe(true);
    expect(await (await app.request("/agents?status=running")).json()).toEqual([]);
  });

  it.each([
    ["skip=-1", "skip"],
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["limit=1.5", "limit"],
    ["limit=abc", "limit"],
    ["limit=", "limit"],
    ["skip=", "skip"],
    ["limit=1&limit=2", "limit"],
    ["status=sleeping", "status"],
    ["status=IDLE", "status"],
  ])("rejects ?%s with 400 naming %s", async (query, field) => {
    const res = await app.request(`/agents?${query}`);
    expect(res.status).toBe(400);
    const error = (await res.json()) as { error: string; details: { issues: { field: string }[] } };
    expect(error.error).toBe("validation_error");
    expect(error.details.issues.map((i) => i.field)).toEqual([field]);
  });

  it("accepts the limits at their edges", async () => {
    for (const query of ["skip=0", "limit=1", "limit=1000"]) {
      expect((await app.request(`/agents?${query}`)).status).toBe(200);
    }
  });
});

describe("GET /agents/{agent_id}", () => {
  it("returns the agent, the same each time", async () => {
    const agent = await createAgent(app);
    for (let i = 0; i < 2; i++) {
      const res = await app.request(`/agents/${agent.id}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(agent);
    }
  });

  it.each([missingId, "not-a-uuid", "1", "%F0%9F%98%80", "' OR 1=1 --"])("is 404 for %s", async (id) => {
    const res = await app.request(`/agents/${encodeURIComponent(id)}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(notFound);
  });
});

describe("PUT /agents/{agent_id}", () => {
  it("replaces name and type, keeps status and created_at", async () => {
    const agent = await createAgent(app, { name: "before", type: "worker" });
    const body = { name: "after", type: "supervisor" };
    const res = await app.request(`/agents/${agent.id}`, { method: "PUT", json: body });
    expect(res.status).toBe(200);
    const replaced = (await res.json()) as AgentOut;
    expect(replaced).toMatchObject({ ...body, id: agent.id, status: "idle", created_at: agent.created_at });
    expect(replaced.version).toBe(agent.version + 1);
    expect(Date.parse(String(replaced.updated_at))).toBeGreaterThanOrEqual(Date.parse(agent.updated_at));
    const again = await app.request(`/agents/${agent.id}`, { method: "PUT", json: body });
    expect(again.status).toBe(200);
    // The same values again change nothing: no new version.
    expect(await again.json()).toEqual(replaced);
    expect(await app.request(`/agents/${agent.id}`).then((r) => r.json())).toMatchObject(body);
  });

  it("is a full replacement: a missing field is 400 and nothing changes", async () => {
    const agent = await createAgent(app);
    const res = await app.request(`/agents/${agent.id}`, { method: "PUT", json: { name: "only name" } });
    expect(res.status).toBe(400);
    expect(await app.request(`/agents/${agent.id}`).then((r) => r.json())).toEqual(agent);
  });

  it("is 404 for a missing agent, before or after validation", async () => {
    for (const id of [missingId, "nope"]) {
      const res = await app.request(`/agents/${id}`, { method: "PUT", json: { name: "x", type: "worker" } });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(notFound);
    }
  });
});

describe("DELETE /agents/{agent_id}", () => {
  it("is 204 with no body and no Content-Type, then 404", async () => {
    const agent = await createAgent(app);
    const res = await app.request(`/agents/${agent.id}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(res.headers.get("content-type")).toBeNull();
    expect(await res.arrayBuffer()).toHaveProperty("byteLength", 0);
    expect((await app.request(`/agents/${agent.id}`)).status).toBe(404);
    const again = await app.request(`/agents/${agent.id}`, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual(notFound);
  });

  it("is 404 for an id that is not a UUID", async () => {
    const res = await app.request("/agents/123", { method: "DELETE" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(notFound);
  });
});
