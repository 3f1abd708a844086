// The benchmark's baseline (bench/baseline/) must answer like the service,
// or its ratios compare different work: same status codes, headers that
// matter, error bodies and body shapes, for the agent endpoints it mirrors.
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createBaselineServer } from "../bench/baseline/server.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTestDatabase, type TestDatabase } from "./helpers/databases.js";

let service: TestApp;
let baselineDatabase: TestDatabase;
let baselineUrl: string;
let closeBaseline: () => Promise<void>;

beforeAll(async () => {
  service = await startTestApp();
  baselineDatabase = await createTestDatabase(inject("templateDatabase"));
  const migrations = fileURLToPath(new URL("../prisma/sqlite/migrations", import.meta.url));
  const server = createBaselineServer(baselineDatabase.url, migrations).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  baselineUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closeBaseline = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(async () => {
  await closeBaseline();
  await baselineDatabase.drop();
  await service.close();
});

interface Answer {
  status: number;
  contentType: string | null;
  location: string | null;
  allow: string | null;
  body: unknown;
}

async function ask(
  base: string,
  path: string,
  init: { method?: string; json?: unknown; body?: string; type?: string } = {},
) {
  const body = init.json === undefined ? init.body : JSON.stringify(init.json);
  const type = init.type ?? (body === undefined ? undefined : "application/json");
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? "GET",
    body,
    headers: type ? { "content-type": type } : {},
  });
  const text = await res.text();
  expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    location: res.headers.get("location"),
    allow: res.headers.get("allow"),
    body: text ? JSON.parse(text) : undefined,
  } satisfies Answer;
}

const both = (path: string, init?: Parameters<typeof ask>[2]) =>
  Promise.all([ask(service.baseUrl, path, init), ask(baselineUrl, path, init)]);

/** Values replaced by their kind: what a client can rely on, without ids and times. */
const shape = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(shape);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shape(inner)]));
  if (typeof value === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(value))
    return "<uuid>";
  if (typeof value === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(value)) return "<timestamp>";
  return value;
};

describe("the bench baseline answers like the service", () => {
  it.each([
    ["/agents?limit=0"],
    ["/agents?limit=1001"],
    ["/agents?skip=-1&status=bogus"],
    ["/agents?limit=1.5"],
    ["/agents?limit=abc"],
    ["/agents?status="],
    ["/agents/not-a-uuid"],
    ["/agents/00000000-0000-4000-8000-000000000000"],
    ["/nothing-here"],
  ])("GET %s: the same error", async (path) => {
    const [fromService, fromBaseline] = await both(path);
    expect(fromService.status).toBeGreaterThanOrEqual(400);
    expect(fromBaseline).toEqual(fromService);
  });

  it.each([
    [{ name: "", type: "robot" }],
    [{ type: "worker" }],
    [{ name: 5, type: "worker" }],
    [{ name: "x".repeat(101), type: "worker" }],
    [["not", "an", "object"]],
  ])("POST /agents %j: the same validation error", async (json) => {
    const [fromService, fromBaseline] = await both("/agents", { method: "POST", json });
    expect(fromService.status).toBe(400);
    expect(fromBaseline).toEqual(fromService);
  });

  it("malformed JSON and a non-JSON content type: the same errors", async () => {
    const malformed = await both("/agents", { method: "POST", body: "{bad" });
    expect(malformed[0].status).toBe(400);
    expect(malformed[1]).toEqual(malformed[0]);
    const text = await both("/agents", { method: "POST", body: "{}", type: "text/plain" });
    expect(text[0].status).toBe(415);
    expect(text[1]).toEqual(text[0]);
  });

  it("a known path with another method: the same 405 and Allow", async () => {
    const [fromService, fromBaseline] = await both("/agents", { method: "DELETE" });
    expect(fromService.status).toBe(405);
    expect(fromBaseline).toEqual(fromService);
  });

  it("create, read, list in order, replace, delete: the same statuses, headers and shapes", async () => {
    const created = await both("/agents", { method: "POST", json: { name: "Scout 🛰️", type: "assistant", extra: 1 } });
    for (const answer of created) {
      expect(answer.status).toBe(201);
      expect(answer.location).toBe(`/agents/${(answer.body as { id: string }).id}`);
    }
    expect(shape(created[1].body)).toEqual(shape(created[0].body));
    expect(created[1].contentType).toBe(created[0].contentType);

    const [serviceAgent, baselineAgent] = created.map((answer) => answer.body as { id: string });
    const read = await Promise.all([
      ask(service.baseUrl, `/agents/${serviceAgent?.id}`),
      ask(baselineUrl, `/agents/${baselineAgent?.id}`),
    ]);
    expect(read.map((answer) => answer.body)).toEqual([serviceAgent, baselineAgent]);

    for (const name of ["second", "third"]) await both("/agents", { method: "POST", json: { name, type: "worker" } });
    const listed = await both("/agents?skip=0&limit=10&status=idle");
    expect(listed[0].status).toBe(200);
    const names = listed.map((answer) => (answer.body as { name: string }[]).map((agent) => agent.name));
    expect(names).toEqual([
      ["Scout 🛰️", "second", "third"],
      ["Scout 🛰️", "second", "third"],
    ]);
    expect(shape(listed[1].body)).toEqual(shape(listed[0].body));

    const replaced = await Promise.all([
      ask(service.baseUrl, `/agents/${serviceAgent?.id}`, { method: "PUT", json: { name: "Renamed", type: "worker" } }),
      ask(baselineUrl, `/agents/${baselineAgent?.id}`, { method: "PUT", json: { name: "Renamed", type: "worker" } }),
    ]);
    expect(replaced.map((answer) => answer.status)).toEqual([200, 200]);
    expect(shape(replaced[1].body)).toEqual(shape(replaced[0].body));

    for (const [base, id] of [
      [service.baseUrl, serviceAgent?.id],
      [baselineUrl, baselineAgent?.id],
    ]) {
      const deleted = await ask(base as string, `/agents/${id}`, { method: "DELETE" });
      expect(deleted).toEqual({ status: 204, contentType: null, location: null, allow: null, body: undefined });
      expect((await ask(base as string, `/agents/${id}`, { method: "DELETE" })).body).toEqual({
        detail: "Agent not found",
      });
    }
  });
});
