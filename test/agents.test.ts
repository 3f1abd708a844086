import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent } from "./helpers/factories.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe("POST /agents", () => {
  it("creates an idle agent with 201 and a Location", async () => {
    const res = await app.request("/agents", { method: "POST", json: { name: "Scout", type: "assistant", extra: 1 } });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const agent = (await res.json()) as Record<string, unknown>;
    expect(res.headers.get("location")).toBe(`/agents/${agent.id}`);
    expect(agent).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "Scout",
      type: "assistant",
      status: "idle",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: agent.created_at,
    });
  });
});

describe("GET /agents/{agent_id}", () => {
  it("returns the agent", async () => {
    const agent = await createAgent(app);
    const res = await app.request(`/agents/${agent.id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(agent);
  });
});
