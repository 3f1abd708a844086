import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent } from "./helpers/factories.js";
import { sendRaw } from "./helpers/raw-http.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const request = (line: string, headers = "Host: localhost\r\n") =>
  sendRaw(app.baseUrl, `${line}\r\n${headers}Connection: close\r\n\r\n`);

const badTarget = {
  error: "validation_error",
  message: "Request validation failed: request-target: must be a path such as /agents (or an absolute http URL)",
  details: {
    issues: [{ field: "request-target", message: "must be a path such as /agents (or an absolute http URL)" }],
  },
};

describe("request targets that are not a path", () => {
  it.each([
    "OPTIONS * HTTP/1.1",
    "GET * HTTP/1.1",
    "GET http://localhost:99999/agents HTTP/1.1",
    "GET http://localhost:-1/agents HTTP/1.1",
    "DELETE http://[::1/agents HTTP/1.1",
    "GET ftp://localhost/agents HTTP/1.1",
  ])("%s is a 400 in the REST format, and the service keeps serving", async (line) => {
    const res = await request(line);
    expect(res.status).toBe(400);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(res.body)).toEqual(badTarget);
    expect((await app.request("/agents?limit=1")).status).toBe(200);
  });

  it("logs the refused request like any other", async () => {
    await request("OPTIONS * HTTP/1.1", "Host: localhost\r\nX-Request-Id: star-1\r\n");
    await expect
      .poll(() => app.logs.find((line) => line.request_id === "star-1"))
      .toMatchObject({ msg: "request", method: "OPTIONS", path: "(invalid request target)", status: 400 });
  });
});

describe("the absolute form (RFC 9112 §3.2.2)", () => {
  it("is served as its path when its authority parses", async () => {
    const agent = await createAgent(app);
    const res = await request(`GET http://localhost:8000/agents/${agent.id} HTTP/1.1`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual(agent);
    const docs = await request("GET http://localhost/openapi.json?x=1 HTTP/1.1");
    expect(docs.status).toBe(200);
  });

  it("is never normalised: a dot segment in it matches nothing", async () => {
    const agent = await createAgent(app);
    const res = await request(`DELETE http://localhost/agents/${agent.id}/tasks/.. HTTP/1.1`);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual({ detail: "Not Found" });
    expect((await app.request(`/agents/${agent.id}`)).status).toBe(200);
  });
});
