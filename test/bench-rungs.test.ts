// The benchmark's rung servers (bench/lib/rungs/) must answer GET
// /agents/{id} as the service does, or the rungs table compares different
// work. The bench checks one answer per rung before it measures; this keeps
// them honest between runs, on both databases.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expressRung } from "../bench/lib/rungs/express.js";
import type { Rung } from "../bench/lib/rungs/http.js";
import { procedureRung } from "../bench/lib/rungs/procedure.js";
import { serviceFunctionRung } from "../bench/lib/rungs/service-function.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

let service: TestApp;
let agentId: string;

beforeAll(async () => {
  service = await startTestApp();
  const created = await service.request("/agents", {
    method: "POST",
    json: { name: "rung", type: "worker", metadata: { tier: "gold" } },
  });
  agentId = ((await created.json()) as { id: string }).id;
  // A second version, a status and an updated_at of their own.
  const patched = await service.request(`/agents/${agentId}`, { method: "PATCH", json: { status: "running" } });
  expect(patched.status).toBe(200);
});
afterAll(() => service.close());

async function answer(base: string, path: string) {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, contentType: res.headers.get("content-type"), body: await res.text() };
}

describe.each([
  ["express 5 with the baseline's statement", (url: string) => Promise.resolve(expressRung(url))],
  ["node:http with agentsService.get", serviceFunctionRung],
  ["node:http with the agents.get procedure", (url: string) => procedureRung(url, {})],
])("the rung %s", (_, create: (url: string) => Promise<Rung>) => {
  it("answers an agent and an unknown one with the service's status, type and body, byte for byte", async () => {
    const rung = await create(service.database.url);
    const server = createServer(rung.listener).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const path of [`/agents/${agentId}`, "/agents/00000000-0000-4000-8000-000000000000"]) {
        const expected = await answer(service.baseUrl, path);
        expect(await answer(base, path)).toEqual(expected);
      }
      expect(JSON.parse((await answer(base, `/agents/${agentId}`)).body)).toMatchObject({
        id: agentId,
        status: "running",
        version: 2,
        metadata: { tier: "gold" },
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await rung.close();
    }
  });
});
