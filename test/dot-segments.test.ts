import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { sendPath } from "./helpers/raw-http.js";

// docs/clients.md: paths are matched without collapsing dot segments, so no
// spelling of `.` or `..` can move a request to another resource (before,
// DELETE /agents/{A}/tasks/%2e%2e deleted agent A and its tasks).
let app: TestApp;
let agentId: string;
let taskId: string;
let before: { agent: string; tasks: string; agents: string };

const snapshot = async () => ({
  agent: await (await app.request(`/agents/${agentId}`)).text(),
  tasks: await (await app.request(`/agents/${agentId}/tasks?limit=1000`)).text(),
  agents: await (await app.request("/agents?limit=1000")).text(),
});

beforeAll(async () => {
  app = await startTestApp({}, { sampleData: true });
  agentId = (await createAgent(app)).id;
  taskId = (await createTask(app, agentId)).id;
  await createTask(app, agentId, { title: "second" });
  before = await snapshot();
});
afterAll(() => app.close());

const dots = [".", "..", "%2e", "%2E", "%2e%2e", "%2E%2e", "%2e%2E", ".%2e", "%2e.", "%2E%2E"];
const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
// A body each write would accept, were it routed to the agent or the task.
const body = JSON.stringify({ name: "moved", type: "worker", status: "running", title: "moved" });

/** Each documented path with its parameters filled, then spelt with a dot segment in every place. */
async function dottedPaths(): Promise<string[]> {
  const document = (await (await app.request("/openapi.json")).json()) as { paths: Record<string, unknown> };
  const paths = new Set<string>();
  for (const template of Object.keys(document.paths)) {
    const concrete = template.replace("{agent_id}", agentId).replace("{task_id}", taskId);
    for (const dot of dots) {
      // Each parameter as a dot segment.
      for (const param of template.match(/\{[^}]+\}/g) ?? []) {
        paths.add(template.replace(param, dot).replace("{agent_id}", agentId).replace("{task_id}", taskId));
      }
      // One more segment that a normaliser would cancel, or stay on.
      paths.add(`${concrete}/${dot}`);
      paths.add(`${concrete}/x/${dot}`);
      // A dot segment inside the path.
      const segments = concrete.split("/");
      for (let i = 2; i < segments.length + 1; i++) {
        paths.add([...segments.slice(0, i), dot, ...segments.slice(i)].join("/"));
      }
    }
  }
  return [...paths];
}

describe("dot segments, plain or percent-encoded", () => {
  it("/agents/., /agents/%2e and /agents/.. are 404, never the collection", async () => {
    for (const path of ["/agents/.", "/agents/%2e", "/agents/..", "/agents/%2E%2E", "/agents/./", "/agents/../"]) {
      for (const method of ["GET", "POST"]) {
        const res = await sendPath(app.baseUrl, method, path, {
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "x", type: "worker" }),
        });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(JSON.parse(res.body)).toEqual({ detail: "Not Found" });
      }
    }
  });

  it("DELETE /agents/{A}/tasks/%2e%2e does not touch agent A", async () => {
    const res = await sendPath(app.baseUrl, "DELETE", `/agents/${agentId}/tasks/%2e%2e`);
    expect(res.status).toBe(404);
    expect(await snapshot()).toEqual(before);
  });

  it("match nothing on any documented route, with any method, and change nothing", async () => {
    const paths = await dottedPaths();
    expect(paths.length).toBeGreaterThan(500);
    for (const path of paths) {
      for (const method of methods) {
        const res = await sendPath(app.baseUrl, method, path, {
          headers: { "content-type": "application/json" },
          body: ["GET", "HEAD", "DELETE", "OPTIONS"].includes(method) ? undefined : body,
        });
        expect(res.status, `${method} ${path}`).toBe(404);
        if (method !== "HEAD") expect(JSON.parse(res.body), `${method} ${path}`).toEqual({ detail: "Not Found" });
      }
    }
    expect(await snapshot()).toEqual(before);
  });
});
