import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { documentedBy } from "./helpers/openapi-responses.js";

// A query string is read by the routes that take query parameters, and by
// no other: like an unknown parameter, it is ignored, even when it is not
// valid percent-encoding — a 400 there would be a status its operation
// never documents.
let app: TestApp;
let documented: Awaited<ReturnType<typeof documentedBy>>;
beforeAll(async () => {
  app = await startTestApp({}, { sampleData: true });
  documented = await documentedBy(app);
});
afterAll(() => app.close());

describe("a malformed query string", () => {
  it("on a route without query parameters is ignored: GET a task", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const res = await app.request(`/agents/${agent.id}/tasks/${task.id}?%`);
    expect(res.status).toBe(200);
    expect(JSON.parse(await documented(res, "GET", "/agents/{agent_id}/tasks/{task_id}"))).toEqual(task);
  });

  it("on a route without query parameters is ignored: DELETE a lease of no agent is its 404", async () => {
    const res = await app.request(`/agents/__proto__/leases/${crypto.randomUUID()}?%FF&%`, { method: "DELETE" });
    expect(res.status).toBe(404);
    expect(JSON.parse(await documented(res, "DELETE", "/agents/{agent_id}/leases/{lease_id}"))).toEqual({
      detail: "Agent not found",
    });
  });

  it("on a data route without query parameters is ignored", async () => {
    const res = await app.request("/v1/coe/latest?%E0%A4%A");
    expect(res.status).toBe(200);
    await documented(res, "GET", "/v1/coe/latest");
  });

  it("on a route with query parameters is still a 400 naming what could not be read", async () => {
    const res = await app.request("/agents?%");
    expect(res.status).toBe(400);
    expect(JSON.parse(await documented(res, "GET", "/agents"))).toEqual({
      error: "validation_error",
      message: "Request validation failed: parameter name: is not valid percent-encoded UTF-8",
      details: { issues: [{ field: "parameter name", message: "is not valid percent-encoded UTF-8" }] },
    });
  });
});
