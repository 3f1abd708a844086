import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRouter } from "../src/modules/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { documentedBy } from "./helpers/openapi-responses.js";

// docs/http.md over REST and tRPC, on the database the run uses.
let app: TestApp;
let documented: Awaited<ReturnType<typeof documentedBy>>;
beforeAll(async () => {
  app = await startTestApp();
  documented = await documentedBy(app);
});
afterAll(() => app.close());

const agentPath = "/agents/{agent_id}";
const taskPath = "/agents/{agent_id}/tasks/{task_id}";

const preconditionFailed = (what: string, current: number) => ({
  error: "precondition_failed",
  message: `${what} is at version ${current}, not a version the request names`,
  details: { current_version: current },
});

describe("ETag", () => {
  it("is the version on the 201, on GET, and on every write's answer", async () => {
    const created = await app.request("/agents", { method: "POST", json: { name: "tagged", type: "worker" } });
    expect(created.status).toBe(201);
    expect(created.headers.get("etag")).toBe('"1"');
    const { id } = (await created.json()) as { id: string };
    const read = await app.request(`/agents/${id}`);
    expect(read.headers.get("etag")).toBe('"1"');
    const patched = await app.request(`/agents/${id}`, { method: "PATCH", json: { name: "renamed" } });
    expect(patched.headers.get("etag")).toBe('"2"');
    expect(((await patched.json()) as { version: number }).version).toBe(2);
    const put = await app.request(`/agents/${id}`, { method: "PUT", json: { name: "again", type: "assistant" } });
    expect(put.headers.get("etag")).toBe('"3"');

    const task = await app.request(`/agents/${id}/tasks`, { method: "POST", json: { title: "t" } });
    expect(task.status).toBe(201);
    expect(task.headers.get("etag")).toBe('"1"');
  });

  it("HEAD answers as GET with the ETag and no body", async () => {
    const agent = await createAgent(app);
    const res = await app.request(`/agents/${agent.id}`, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe('"1"');
    expect(await res.text()).toBe("");
  });
});

describe("If-None-Match", () => {
  it("with the current tag: 304, no body, the ETag; with another: 200", async () => {
    const agent = await createAgent(app);
    const hit = await app.request(`/agents/${agent.id}`, { headers: { "If-None-Match": '"1"' } });
    const hitBody = await documented(hit, "GET", agentPath);
    expect(hit.status).toBe(304);
    expect(hitBody).toBe("");
    expect(hit.headers.get("etag")).toBe('"1"');
    expect(hit.headers.get("content-type")).toBeNull();

    for (const tag of ['W/"1"', '"7", "1"', "*"]) {
      const res = await app.request(`/agents/${agent.id}`, { headers: { "If-None-Match": tag } });
      expect(res.status).toBe(304);
    }
    for (const tag of ['"2"', "garbage"]) {
      const res = await app.request(`/agents/${agent.id}`, { headers: { "If-None-Match": tag } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe(agent.id);
    }
  });

  it("works for tasks, and stops matching once the task changes", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const url = `/agents/${agent.id}/tasks/${task.id}`;
    const hit = await app.request(url, { headers: { "If-None-Match": '"1"' } });
    await documented(hit, "GET", taskPath);
    expect(hit.status).toBe(304);
    await app.request(url, { method: "PATCH", json: { priority: 9 } });
    const miss = await app.request(url, { headers: { "If-None-Match": '"1"' } });
    expect(miss.status).toBe(200);
    expect(miss.headers.get("etag")).toBe('"2"');
  });
});

describe("If-Match", () => {
  it("PATCH at the current version: 200; at another: 412 with current_version, nothing changed", async () => {
    const agent = await createAgent(app, { name: "before" });
    const url = `/agents/${agent.id}`;
    const ok = await app.request(url, { method: "PATCH", json: { name: "after" }, headers: { "If-Match": '"1"' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("etag")).toBe('"2"');

    const stale = await app.request(url, { method: "PATCH", json: { name: "lost" }, headers: { "If-Match": '"1"' } });
    const staleBody = await documented(stale, "PATCH", agentPath);
    expect(stale.status).toBe(412);
    expect(stale.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(stale.headers.get("etag")).toBe('"2"');
    expect(JSON.parse(staleBody)).toEqual(preconditionFailed("Agent", 2));
    const now = (await (await app.request(url)).json()) as { name: string; version: number };
    expect(now).toMatchObject({ name: "after", version: 2 });
  });

  it("accepts *, a list naming the version, and refuses weak or non-version tags with 412", async () => {
    const agent = await createAgent(app);
    const url = `/agents/${agent.id}`;
    const star = await app.request(url, { method: "PATCH", json: { name: "a" }, headers: { "If-Match": "*" } });
    expect(star.status).toBe(200);
    const list = await app.request(url, { method: "PATCH", json: { name: "b" }, headers: { "If-Match": '"9", "2"' } });
    expect(list.status).toBe(200);
    for (const tag of ['W/"3"', '"abc"', '"03"', '""']) {
      const res = await app.request(url, { method: "PATCH", json: { name: "c" }, headers: { "If-Match": tag } });
      expect(res.status).toBe(412);
      expect(await res.json()).toEqual(preconditionFailed("Agent", 3));
    }
  });

  it("refuses a value that is not an entity-tag list with 400, nothing changed", async () => {
    const agent = await createAgent(app, { name: "kept" });
    const url = `/agents/${agent.id}`;
    for (const garbage of ["1", "abc", '"1', '"1" x', " "]) {
      const res = await app.request(url, { method: "PATCH", json: { name: "no" }, headers: { "If-Match": garbage } });
      const body = await documented(res, "PATCH", agentPath);
      expect(res.status).toBe(400);
      expect(JSON.parse(body)).toEqual({
        error: "validation_error",
        message: 'Request validation failed: If-Match: must be * or a list of entity tags such as "3"',
        details: { issues: [{ field: "If-Match", message: 'must be * or a list of entity tags such as "3"' }] },
      });
    }
    expect(((await (await app.request(url)).json()) as { name: string }).name).toBe("kept");
  });

  it("ignores expected_version in a REST body: only If-Match is REST's condition", async () => {
    const agent = await createAgent(app);
    const res = await app.request(`/agents/${agent.id}`, {
      method: "PATCH",
      json: { name: "fine", expected_version: 99 },
    });
    expect(res.status).toBe(200);
  });

  it("PUT and DELETE of agents and tasks: 412 at another version, then succeed at the current one", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const agentUrl = `/agents/${agent.id}`;
    const taskUrl = `${agentUrl}/tasks/${task.id}`;
    const cases: [string, string, string, unknown][] = [
      ["PUT", agentUrl, agentPath, { name: "p", type: "worker" }],
      ["PATCH", taskUrl, taskPath, { title: "p" }],
      ["DELETE", taskUrl, taskPath, undefined],
      ["DELETE", agentUrl, agentPath, undefined],
    ];
    for (const [method, url, template, json] of cases) {
      const refused = await app.request(url, { method, json, headers: { "If-Match": '"5"' } });
      const body = await documented(refused, method, template);
      expect(refused.status).toBe(412);
      expect(JSON.parse(body)).toEqual(preconditionFailed(url === agentUrl ? "Agent" : "Task", 1));
    }
    expect((await app.request(taskUrl)).status).toBe(200);
    expect((await app.request(agentUrl)).status).toBe(200);

    const put = await app.request(agentUrl, {
      method: "PUT",
      json: { name: "p", type: "worker" },
      headers: { "If-Match": '"1"' },
    });
    expect(put.status).toBe(200);
    const deleteTask = await app.request(taskUrl, { method: "DELETE", headers: { "If-Match": '"1"' } });
    expect(deleteTask.status).toBe(204);
    const deleteAgent = await app.request(agentUrl, { method: "DELETE", headers: { "If-Match": '"2"' } });
    expect(deleteAgent.status).toBe(204);
    expect((await app.request(agentUrl)).status).toBe(404);
  });

  it("on a missing resource is still 404", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    const res = await app.request(`/agents/${missing}`, {
      method: "PATCH",
      json: { name: "x" },
      headers: { "If-Match": '"1"' },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: "Agent not found" });
  });

  it("two PATCHes racing with the same version: one 200, one 412, and one write", async () => {
    for (let round = 0; round < 5; round++) {
      const agent = await createAgent(app);
      const url = `/agents/${agent.id}`;
      const [a, b] = await Promise.all(
        ["left", "right"].map((name) =>
          app.request(url, { method: "PATCH", json: { name }, headers: { "If-Match": '"1"' } }),
        ),
      );
      const statuses = [a?.status, b?.status].sort();
      expect(statuses).toEqual([200, 412]);
      const loser = (a?.status === 412 ? a : b) as Response;
      expect(await loser.json()).toEqual(preconditionFailed("Agent", 2));
      expect(((await (await app.request(url)).json()) as { version: number }).version).toBe(2);
    }
  });

  it("two task PATCHes racing with the same version: one 200, one 412", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const url = `/agents/${agent.id}/tasks/${task.id}`;
    const answers = await Promise.all(
      [3, 7].map((priority) =>
        app.request(url, { method: "PATCH", json: { priority }, headers: { "If-Match": '"1"' } }),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([200, 412]);
  });
});

describe("expected_version over tRPC", () => {
  const client = () => createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc` })] });

  it("does what If-Match does: PRECONDITION_FAILED with the current version", async () => {
    const trpc = client();
    const agent = await trpc.agents.create.mutate({ name: "rpc", type: "worker" });
    const updated = await trpc.agents.update.mutate({ agent_id: agent.id, name: "v2", expected_version: 1 });
    expect(updated.version).toBe(2);
    const error = await trpc.agents.update
      .mutate({ agent_id: agent.id, name: "v3", expected_version: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    const { message, data } = error as TRPCClientError<AppRouter>;
    expect(message).toBe("Agent is at version 2, not a version the request names");
    expect(data).toMatchObject({
      code: "PRECONDITION_FAILED",
      httpStatus: 412,
      error: "precondition_failed",
      details: { current_version: 2 },
    });
    const removed = await trpc.agents.remove.mutate({ agent_id: agent.id, expected_version: 1 }).catch((e) => e);
    expect((removed as TRPCClientError<AppRouter>).data?.httpStatus).toBe(412);
    const task = await trpc.tasks.create.mutate({ agent_id: agent.id, title: "t" });
    const taskError = await trpc.tasks.update
      .mutate({ agent_id: agent.id, task_id: task.id, title: "x", expected_version: 4 })
      .catch((e) => e);
    expect((taskError as TRPCClientError<AppRouter>).data?.details).toEqual({ current_version: 1 });
    await trpc.tasks.remove.mutate({ agent_id: agent.id, task_id: task.id, expected_version: 1 });
    await trpc.agents.remove.mutate({ agent_id: agent.id, expected_version: 2 });
  });
});
