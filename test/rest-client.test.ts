import createClient from "openapi-fetch";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../generated/openapi.js";
import { fingerprintOf } from "../src/idempotency/key.js";
import { idempotencyStore } from "../src/idempotency/sql.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createUser } from "./helpers/auth.js";
import { type OpenApiDocument, responseChecker, responseRecorder, sendRefusals } from "./helpers/openapi-responses.js";

// A client typed from the document (`npm run openapi:types`) whose every
// response is checked against the document the server serves: status
// documented for the operation, body valid against that response's schema.
let app: TestApp;
let document: OpenApiDocument;
let api: ReturnType<typeof createClient<paths>>;
let responses: ReturnType<typeof responseRecorder>;

beforeAll(async () => {
  app = await startTestApp({ BODY_LIMIT: "2kb" });
  document = (await (await app.request("/openapi.json")).json()) as OpenApiDocument;
  api = createClient<paths>({ baseUrl: app.baseUrl });
  responses = responseRecorder(document);
  api.use(responses.middleware);
});
afterAll(() => app.close());
afterEach(() => {
  // Emptied each time, so one disagreement fails only the test that met it.
  expect(responses.problems.splice(0)).toEqual([]);
});

const missingId = "00000000-0000-4000-8000-000000000000";

describe("a client generated from /openapi.json", () => {
  it("runs the agent round trip: create, get, list, replace, delete", async () => {
    const created = await api.POST("/agents", { body: { name: "Generated", type: "worker" } });
    expect(created.response.status).toBe(201);
    const agent = created.data;
    if (!agent) throw new Error(`create failed: ${created.response.status} ${JSON.stringify(created.error)}`);
    expect(created.response.headers.get("location")).toBe(`/agents/${agent.id}`);
    const path = { agent_id: agent.id };

    expect((await api.GET("/agents/{agent_id}", { params: { path } })).data).toEqual(agent);
    const listed = await api.GET("/agents", { params: { query: { status: "idle", skip: 0, limit: 1000 } } });
    expect(listed.data?.map((a) => a.id)).toContain(agent.id);

    const replaced = await api.PUT("/agents/{agent_id}", {
      params: { path },
      body: { name: "Renamed", type: "assistant" },
    });
    expect(replaced.data).toMatchObject({ id: agent.id, name: "Renamed", type: "assistant", status: "idle" });

    const deleted = await api.DELETE("/agents/{agent_id}", { params: { path } });
    expect(deleted.response.status).toBe(204);
    expect((await api.GET("/agents/{agent_id}", { params: { path } })).error).toEqual({ detail: "Agent not found" });
  });

  it("gets the documented error responses: 400, 404, 413, 415", async () => {
    const path = { agent_id: missingId };
    const valid = { name: "x", type: "worker" } as const;
    const tooLarge = { name: "x".repeat(4096), type: "worker" } as const;
    const asText = { bodySerializer: () => "name=x", headers: { "content-type": "text/plain" } };
    const calls = [
      [400, api.GET("/agents", { params: { query: { limit: 0 } } })],
      [400, api.POST("/agents", { body: { name: "", type: "worker" } })],
      [413, api.POST("/agents", { body: tooLarge })],
      [415, api.POST("/agents", { body: valid, ...asText })],
      [404, api.GET("/agents/{agent_id}", { params: { path } })],
      [404, api.PUT("/agents/{agent_id}", { params: { path }, body: valid })],
      [400, api.PUT("/agents/{agent_id}", { params: { path }, body: { name: "", type: "worker" } })],
      [413, api.PUT("/agents/{agent_id}", { params: { path }, body: tooLarge })],
      [415, api.PUT("/agents/{agent_id}", { params: { path }, body: valid, ...asText })],
      [404, api.DELETE("/agents/{agent_id}", { params: { path } })],
    ] as const;
    for (const [status, call] of calls) {
      const { response, error } = await call;
      expect(response.status).toBe(status);
      expect(error).toBeDefined();
    }
  });

  it("drives the lifecycle and the task round trip, with their errors: 400, 404, 409, 413, 415", async () => {
    const asText = { bodySerializer: () => "x", headers: { "content-type": "text/plain" } };
    const big = "x".repeat(4096);
    const created = await api.POST("/agents", { body: { name: "Tasked", type: "worker" } });
    const agent = { agent_id: created.data?.id ?? "" };
    const missing = { agent_id: missingId };

    expect(
      (await api.PATCH("/agents/{agent_id}", { params: { path: agent }, body: { status: "running" } })).data,
    ).toMatchObject({ status: "running" });
    const expectStatus = async (status: number, call: Promise<{ response: Response }>) =>
      expect((await call).response.status).toBe(status);
    await api.PATCH("/agents/{agent_id}", { params: { path: agent }, body: { status: "stopped" } });
    // stopped → paused is not in the table.
    await expectStatus(409, api.PATCH("/agents/{agent_id}", { params: { path: agent }, body: { status: "paused" } }));
    await expectStatus(400, api.PATCH("/agents/{agent_id}", { params: { path: agent }, body: {} }));
    await expectStatus(404, api.PATCH("/agents/{agent_id}", { params: { path: missing }, body: { name: "x" } }));
    await expectStatus(413, api.PATCH("/agents/{agent_id}", { params: { path: agent }, body: { name: big } }));
    await expectStatus(
      415,
      api.PATCH("/agents/{agent_id}", { params: { path: agent }, body: { name: "x" }, ...asText }),
    );
    // The agent is stopped: no new task (409); back to idle, tasks again.
    await expectStatus(409, api.POST("/agents/{agent_id}/tasks", { params: { path: agent }, body: { title: "t" } }));
    await api.PATCH("/agents/{agent_id}", { params: { path: agent }, body: { status: "idle" } });

    const task = await api.POST("/agents/{agent_id}/tasks", {
      params: { path: agent },
      body: { title: "Summarise", input: { pages: [1, 2] } },
    });
    expect(task.response.status).toBe(201);
    const path = { ...agent, task_id: task.data?.id ?? "" };
    expect((await api.GET("/agents/{agent_id}/tasks/{task_id}", { params: { path } })).data).toEqual(task.data);
    const listed = await api.GET("/agents/{agent_id}/tasks", { params: { path: agent, query: { status: "pending" } } });
    expect(listed.data?.map((t) => t.id)).toEqual([path.task_id]);
    const done = await api.PATCH("/agents/{agent_id}/tasks/{task_id}", {
      params: { path },
      body: { status: "cancelled", result: { reason: "not needed" } },
    });
    expect(done.data).toMatchObject({ status: "cancelled", result: { reason: "not needed" } });

    const missingTask = { ...agent, task_id: missingId };
    await expectStatus(400, api.GET("/agents/{agent_id}/tasks", { params: { path: agent, query: { limit: 0 } } }));
    await expectStatus(404, api.GET("/agents/{agent_id}/tasks", { params: { path: missing } }));
    await expectStatus(400, api.POST("/agents/{agent_id}/tasks", { params: { path: agent }, body: { title: "" } }));
    await expectStatus(404, api.POST("/agents/{agent_id}/tasks", { params: { path: missing }, body: { title: "t" } }));
    await expectStatus(413, api.POST("/agents/{agent_id}/tasks", { params: { path: agent }, body: { title: big } }));
    await expectStatus(
      415,
      api.POST("/agents/{agent_id}/tasks", { params: { path: agent }, body: { title: "t" }, ...asText }),
    );
    await expectStatus(404, api.GET("/agents/{agent_id}/tasks/{task_id}", { params: { path: missingTask } }));
    await expectStatus(
      409,
      api.PATCH("/agents/{agent_id}/tasks/{task_id}", { params: { path }, body: { status: "running" } }),
    );
    await expectStatus(400, api.PATCH("/agents/{agent_id}/tasks/{task_id}", { params: { path }, body: {} }));
    await expectStatus(
      404,
      api.PATCH("/agents/{agent_id}/tasks/{task_id}", { params: { path: missingTask }, body: { title: "t" } }),
    );
    await expectStatus(
      413,
      api.PATCH("/agents/{agent_id}/tasks/{task_id}", { params: { path }, body: { title: big } }),
    );
    await expectStatus(
      415,
      api.PATCH("/agents/{agent_id}/tasks/{task_id}", { params: { path }, body: { title: "t" }, ...asText }),
    );
    await expectStatus(204, api.DELETE("/agents/{agent_id}/tasks/{task_id}", { params: { path } }));
    await expectStatus(404, api.DELETE("/agents/{agent_id}/tasks/{task_id}", { params: { path } }));
  });

  it("runs a task through a lease, with the errors: 201, 204, 200, 202, 400, 404, 409, 413, 415", async () => {
    const asText = { bodySerializer: () => "x", headers: { "content-type": "text/plain" } };
    const big = "x".repeat(4096);
    const expectStatus = async (status: number, call: Promise<{ response: Response }>) =>
      expect((await call).response.status).toBe(status);
    const created = await api.POST("/agents", { body: { name: "Leasing", type: "worker" } });
    const agent = { agent_id: created.data?.id ?? "" };
    const missing = { agent_id: missingId };
    // Idle: no work (409); running: work.
    await expectStatus(409, api.POST("/agents/{agent_id}/leases", { params: { path: agent }, body: {} }));
    await api.PATCH("/agents/{agent_id}", { params: { path: agent }, body: { status: "running" } });
    await expectStatus(204, api.POST("/agents/{agent_id}/leases", { params: { path: agent }, body: {} }));
    const task = await api.POST("/agents/{agent_id}/tasks", { params: { path: agent }, body: { title: "Work" } });
    const leased = await api.POST("/agents/{agent_id}/leases", {
      params: { path: agent },
      body: { worker: "w-1", duration_seconds: 30 },
    });
    expect(leased.response.status).toBe(201);
    expect(leased.data?.task_id).toBe(task.data?.id);
    const leasePath = { ...agent, lease_id: leased.data?.id ?? "" };
    const gone = { ...agent, lease_id: missingId };
    await expectStatus(
      400,
      api.POST("/agents/{agent_id}/leases", { params: { path: agent }, body: { wait_seconds: 21 } }),
    );
    await expectStatus(404, api.POST("/agents/{agent_id}/leases", { params: { path: missing }, body: {} }));
    await expectStatus(413, api.POST("/agents/{agent_id}/leases", { params: { path: agent }, body: { worker: big } }));
    await expectStatus(415, api.POST("/agents/{agent_id}/leases", { params: { path: agent }, body: {}, ...asText }));

    expect((await api.GET("/agents/{agent_id}/leases/{lease_id}", { params: { path: leasePath } })).data).toEqual(
      leased.data,
    );
    await expectStatus(404, api.GET("/agents/{agent_id}/leases/{lease_id}", { params: { path: gone } }));
    const renewed = await api.PATCH("/agents/{agent_id}/leases/{lease_id}", {
      params: { path: leasePath },
      body: { duration_seconds: 60 },
    });
    expect(renewed.response.status).toBe(200);
    const renew = (path: typeof leasePath, body: { duration_seconds?: number; worker?: string }, text = {}) =>
      api.PATCH("/agents/{agent_id}/leases/{lease_id}", { params: { path }, body, ...text });
    await expectStatus(400, renew(leasePath, { duration_seconds: 4 }));
    await expectStatus(404, renew(gone, {}));
    await expectStatus(413, renew(leasePath, { worker: big }));
    await expectStatus(415, renew(leasePath, {}, asText));

    const taskPath = { ...agent, task_id: task.data?.id ?? "" };
    const cancelled = await api.PATCH("/agents/{agent_id}/tasks/{task_id}", {
      params: { path: taskPath },
      body: { status: "cancelled" },
    });
    expect(cancelled.response.status).toBe(202);
    expect(cancelled.data).toMatchObject({ status: "running", cancel_requested: true });
    await expectStatus(204, api.DELETE("/agents/{agent_id}/leases/{lease_id}", { params: { path: leasePath } }));
    await expectStatus(404, api.DELETE("/agents/{agent_id}/leases/{lease_id}", { params: { path: leasePath } }));
  });

  it("signs in with the password grant and calls /protected: 200, 400, 401, 413, 415, 429", async () => {
    const user = await createUser(app);
    const form = (fields: Record<string, string>) => ({
      body: fields as never,
      bodySerializer: (body: Record<string, string>) => new URLSearchParams(body).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    const signedIn = await api.POST("/token", form({ username: user.email, password: user.password }));
    expect(signedIn.response.status).toBe(200);
    const token = signedIn.data?.access_token ?? "";
    const me = await api.GET("/protected", { headers: { authorization: `Bearer ${token}` } });
    expect(me.data).toEqual({ user: user.email });
    expect((await api.GET("/protected")).response.status).toBe(401);

    expect((await api.POST("/token", form({ username: user.email }))).response.status).toBe(400);
    expect((await api.POST("/token", form({ username: "x".repeat(4096), password: "x" }))).response.status).toBe(413);
    const asJson = { body: { username: user.email, password: user.password } as never };
    expect((await api.POST("/token", asJson)).response.status).toBe(415);
    // Repeated failures on one account end in 429.
    const victim = await createUser(app);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      statuses.push((await api.POST("/token", form({ username: victim.email, password: "wrong" }))).response.status);
    }
    expect(statuses[0]).toBe(401);
    expect(statuses.at(-1)).toBe(429);
  });

  it("reads every data route: 200, 301, 304, 400 and 404 in each version's format", async () => {
    const withData = await startTestApp({}, { sampleData: true });
    try {
      const dataApi = createClient<paths>({ baseUrl: withData.baseUrl });
      dataApi.use(responses.middleware);
      const get = (client: typeof api, path: string, init: { query?: string; headers?: Record<string, string> } = {}) =>
        client.GET(
          path as never,
          {
            params: {},
            querySerializer: () => init.query ?? "",
            headers: init.headers,
            redirect: "manual",
          } as never,
        );
      const dataPaths = Object.entries(document.paths).filter(
        ([path]) => !/^\/(agents|token|protected|webhooks|events|projects)/.test(path),
      );
      expect(dataPaths.length).toBeGreaterThan(20);
      for (const [path, item] of dataPaths) {
        const query = path.includes("compare") ? "month=2021-01" : "";
        const first = await get(dataApi, path, { query });
        const etag = first.response.headers.get("etag");
        if (etag) await get(dataApi, path, { query, headers: { "If-None-Match": etag } });
        if (item.get?.responses["400"]) {
          await get(dataApi, path, { query: "month=2021-13" });
          await get(dataApi, path, { query: "page=0" });
          if (!path.startsWith("/v")) await get(dataApi, path, { headers: { "x-api-version": "9" } });
        }
        // An empty database has no latest month to compare.
        if (item.get?.responses["404"]) await get(api, path);
        // A root route that the other version lacks is 404 there.
        if (!path.startsWith("/v") && item.get?.responses["404"]) {
          await get(dataApi, path, { headers: { "x-api-version": "2" } });
        }
      }
    } finally {
      await withData.close();
    }
  });

  it("reads the event log: a page, and 400 for a bad position on the page and the stream", async () => {
    expect((await api.GET("/events", { params: { query: { limit: 5 } } })).response.status).toBe(200);
    const badAfter = { query: { after: "x" } } as never;
    expect((await api.GET("/events", { params: badAfter })).response.status).toBe(400);
    expect((await api.GET("/events/stream", { params: badAfter })).response.status).toBe(400);
    // A stream's 200 never ends, so the client (which reads whole bodies) cannot take it: its head is checked here.
    const leave = new AbortController();
    const stream = await fetch(`${app.baseUrl}/events/stream`, { signal: leave.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    leave.abort();
    responses.observed.push({ method: "GET", path: "/events/stream", status: 200, contentType: null, body: "" });
  });

  it("makes conditional requests: 304 with If-None-Match, 412 with a stale If-Match", async () => {
    const created = await api.POST("/agents", { body: { name: "Versioned", type: "worker" } });
    const agent = { agent_id: created.data?.id ?? "" };
    const task = await api.POST("/agents/{agent_id}/tasks", { params: { path: agent }, body: { title: "t" } });
    const path = { ...agent, task_id: task.data?.id ?? "" };
    const current = { "If-None-Match": '"1"' };
    const stale = { "If-Match": '"7"' };
    const calls = [
      [304, api.GET("/agents/{agent_id}", { params: { path: agent, header: current } })],
      [304, api.GET("/agents/{agent_id}/tasks/{task_id}", { params: { path, header: current } })],
      [
        412,
        api.PUT("/agents/{agent_id}", { params: { path: agent, header: stale }, body: { name: "x", type: "worker" } }),
      ],
      [412, api.PATCH("/agents/{agent_id}", { params: { path: agent, header: stale }, body: { name: "x" } })],
      [412, api.DELETE("/agents/{agent_id}", { params: { path: agent, header: stale } })],
      [412, api.PATCH("/agents/{agent_id}/tasks/{task_id}", { params: { path, header: stale }, body: { title: "x" } })],
      [412, api.DELETE("/agents/{agent_id}/tasks/{task_id}", { params: { path, header: stale } })],
      // An If-Match that is not an entity-tag list.
      [400, api.DELETE("/agents/{agent_id}", { params: { path: agent, header: { "If-Match": "3" } } })],
      [400, api.DELETE("/agents/{agent_id}/tasks/{task_id}", { params: { path, header: { "If-Match": "3" } } })],
    ] as const;
    for (const [status, call] of calls) expect((await call).response.status).toBe(status);
  });

  it("sends Idempotency-Key on every creating POST: replay, 409 while the first runs, 422 for another request", async () => {
    const created = await api.POST("/agents", { body: { name: "Keyed", type: "worker" } });
    const agent = { agent_id: created.data?.id ?? "" };
    await api.PATCH("/agents/{agent_id}", { params: { path: agent }, body: { status: "running" } });
    const db = app.database.db;
    // Keys are the acting project's and the caller's own.
    const sender = `${defaultProjectId} address:127.0.0.1`;
    const posts = [
      [
        "agents.create",
        (key: string, name = "Keyed") =>
          api.POST("/agents", { params: { header: { "Idempotency-Key": key } }, body: { name, type: "worker" } }),
      ],
      [
        "tasks.create",
        (key: string, name = "Keyed") =>
          api.POST("/agents/{agent_id}/tasks", {
            params: { path: agent, header: { "Idempotency-Key": key } },
            body: { title: name },
          }),
      ],
      [
        "leases.create",
        (key: string, name = "Keyed") =>
          api.POST("/agents/{agent_id}/leases", {
            params: { path: agent, header: { "Idempotency-Key": key } },
            body: { worker: name },
          }),
      ],
    ] as const;
    for (const [procedure, send] of posts) {
      const key = `rest-client-${procedure}`;
      const first = await send(key);
      expect([201, 204]).toContain(first.response.status);
      const again = await send(key);
      expect(again.response.headers.get("idempotent-replayed")).toBe("true");
      expect((await send(key, "Other")).response.status).toBe(422);
      // A first request still running (on any instance) holds its key.
      const running = `${key}-running`;
      const input =
        procedure === "agents.create"
          ? { name: "Keyed", type: "worker" }
          : procedure === "tasks.create"
            ? { title: "Keyed", ...agent }
            : { worker: "Keyed", ...agent };
      await idempotencyStore.claim(
        db,
        { sender, key: running, fingerprint: fingerprintOf(procedure, input, sender) },
        60_000,
      );
      expect((await send(running)).response.status).toBe(409);
    }
  });

  it("refuses a bad token (401), a bad key (403) and a project the caller cannot act in (404) on every operation", async () => {
    await sendRefusals(app.baseUrl, document, responses, /^\/(agents|events)/);
  });

  it("exercised every documented status of every operation but 405, 500 and 503", () => {
    // 500 and 503 need a broken or overloaded server: unexpected-errors and availability tests cover them.
    // 405 answers a method the path has no operation for, which no client call sends:
    // openapi-method-not-allowed.test.ts sends one to every path.
    // The webhooks' operations have their own client test (webhooks-api.test.ts).
    // So have the projects' operations (projects-api.test.ts) and the schedules' (schedules-api.test.ts).
    const documented = Object.entries(document.paths)
      .filter(
        ([path]) => !path.startsWith("/webhooks") && !path.startsWith("/projects") && !path.includes("/schedules"),
      )
      .flatMap(([path, item]) =>
        Object.entries(item).flatMap(([method, { responses }]) =>
          Object.keys(responses)
            .filter((status) => !["405", "500", "503"].includes(status))
            .map((status) => `${method.toUpperCase()} ${path} ${status}`),
        ),
      );
    const seen = new Set(responses.observed.map(({ method, path, status }) => `${method} ${path} ${status}`));
    expect(documented.filter((response) => !seen.has(response))).toEqual([]);
  });
});

describe("the response check", () => {
  it("fails when the document and the real responses disagree", async () => {
    // The document promises a field the server never sends, and forgets a status it does send.
    const doctored = structuredClone(document);
    const agent = doctored.components.schemas?.Agent as { properties: object; required: string[] };
    agent.properties = { ...agent.properties, owner: { type: "string" } };
    agent.required = [...agent.required, "owner"];
    delete doctored.paths["/agents/{agent_id}"]?.delete?.responses["404"];
    const check = responseChecker(doctored);

    const created = await app.request("/agents", { method: "POST", json: { name: "a", type: "worker" } });
    const body = await created.text();
    const contentType = created.headers.get("content-type");
    expect(check({ method: "POST", path: "/agents", status: 201, contentType, body })).toEqual([
      "POST /agents → 201: body must have required property 'owner' (#/components/schemas/Agent/required)",
    ]);
    expect(check({ method: "DELETE", path: "/agents/{agent_id}", status: 404, contentType, body: "" })).toEqual([
      "DELETE /agents/{agent_id} → 404: status not documented",
    ]);
    expect(check({ method: "DELETE", path: "/agents/{agent_id}", status: 204, contentType: null, body: "{}" })).toEqual(
      ['DELETE /agents/{agent_id} → 204: documented without a body, got "{}"'],
    );
  });
});
