import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

// docs/clients.md: a realistic mix of traffic, replayed through Prism's validating
// proxy with violations as errors: every answer must be one the document describes.
const env = { AUTH_POLICY: "writes", API_KEYS: "replay-key" };
const projectRoot = new URL("..", import.meta.url).pathname;

let app: TestApp;
let prism: ChildProcess;
let proxyUrl: string;
let dir: string;

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  app = await startTestApp(env, { sampleData: true });
  dir = mkdtempSync(join(tmpdir(), "prism-replay-"));
  const documentFile = join(dir, "openapi.json");
  writeFileSync(documentFile, JSON.stringify(openApiDocument(loadConfig({ ...env, SEED_SAMPLE_DATA: "false" }))));
  const port = await freePort();
  proxyUrl = `http://127.0.0.1:${port}`;
  prism = spawn(
    join(projectRoot, "node_modules", ".bin", "prism"),
    ["proxy", documentFile, app.baseUrl, "--errors", "--validate-request=false", "-p", String(port)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (/Prism is listening/.test(output)) resolve();
    };
    prism.stdout?.on("data", onData);
    prism.stderr?.on("data", onData);
    prism.once("exit", (code) => reject(new Error(`prism exited (${code}): ${output}`)));
  });
}, 180_000);

afterAll(async () => {
  prism?.kill("SIGTERM");
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Step {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  json?: unknown;
  status: number;
}

/** Sends one request through the proxy: the expected status, and no violation reported. */
async function replay({ method = "GET", path, headers = {}, json, status }: Step) {
  const res = await fetch(`${proxyUrl}${path}`, {
    method,
    headers: { ...(json === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  const label = `${method} ${path} ${JSON.stringify(headers)}`;
  expect(res.headers.get("sl-violations"), `${label}: ${res.headers.get("sl-violations")}`).toBeNull();
  expect(res.status, `${label}: ${text}`).toBe(status);
  return text === "" ? undefined : JSON.parse(text);
}

const key = { "X-API-Key": "replay-key" };

describe("traffic through Prism's validating proxy", () => {
  it("agents, tasks and their errors", { timeout: 180_000 }, async () => {
    const agent = await replay({
      method: "POST",
      path: "/agents",
      headers: key,
      json: { name: "Replay", type: "worker" },
      status: 201,
    });
    await replay({ path: "/agents", status: 200 });
    await replay({ path: "/agents?limit=5&status=idle", status: 200 });
    await replay({ path: `/agents/${agent.id}`, status: 200 });
    await replay({
      method: "PATCH",
      path: `/agents/${agent.id}`,
      headers: key,
      json: { status: "running" },
      status: 200,
    });
    await replay({
      method: "PUT",
      path: `/agents/${agent.id}`,
      headers: key,
      json: { name: "Replayed", type: "worker" },
      status: 200,
    });
    const task = await replay({
      method: "POST",
      path: `/agents/${agent.id}/tasks`,
      headers: key,
      json: { title: "Replay a task", priority: 5 },
      status: 201,
    });
    await replay({ path: `/agents/${agent.id}/tasks`, status: 200 });
    await replay({ path: `/agents/${agent.id}/tasks/${task.id}`, status: 200 });
    await replay({
      method: "PATCH",
      path: `/agents/${agent.id}/tasks/${task.id}`,
      headers: key,
      json: { priority: 7, description: "Include the regional breakdown" },
      status: 200,
    });
    // Errors the service answers, each in its documented body.
    await replay({ path: "/agents/4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69", status: 404 });
    await replay({ method: "POST", path: "/agents", json: { name: "No key", type: "worker" }, status: 401 });
    await replay({
      method: "POST",
      path: "/agents",
      headers: { "X-API-Key": "wrong" },
      json: { name: "x", type: "worker" },
      status: 403,
    });
    await replay({ method: "POST", path: "/agents", headers: key, json: { name: "", type: "worker" }, status: 400 });
    await replay({
      method: "PATCH",
      path: `/agents/${agent.id}/tasks/${task.id}`,
      headers: key,
      json: { status: "succeeded" },
      status: 409,
    });
    await replay({ method: "DELETE", path: `/agents/${agent.id}/tasks/${task.id}`, headers: key, status: 204 });
    await replay({ method: "DELETE", path: `/agents/${agent.id}`, headers: key, status: 204 });
  });

  it("the event log: pages holding creations, updates with their changes, and deletions", {
    timeout: 180_000,
  }, async () => {
    const agent = await replay({
      method: "POST",
      path: "/agents",
      headers: key,
      json: { name: "Log", type: "worker" },
      status: 201,
    });
    await replay({
      method: "PATCH",
      path: `/agents/${agent.id}`,
      headers: key,
      json: { status: "running" },
      status: 200,
    });
    const task = await replay({
      method: "POST",
      path: `/agents/${agent.id}/tasks`,
      headers: key,
      json: { title: "Watched", metadata: { team: "log" } },
      status: 201,
    });
    await replay({
      method: "PATCH",
      path: `/agents/${agent.id}/tasks/${task.id}`,
      headers: key,
      json: { priority: 9, metadata: { team: null } },
      status: 200,
    });
    await replay({ method: "DELETE", path: `/agents/${agent.id}`, headers: key, status: 204 });
    const events = await replay({ path: `/events?agent_id=${agent.id}`, status: 200 });
    expect(events.map((event: { type: string }) => event.type)).toEqual([
      "agent.created",
      "agent.updated",
      "task.created",
      "task.updated",
      "task.deleted",
      "agent.deleted",
    ]);
    await replay({ path: `/events?agent_id=${agent.id}&types=task.*&limit=1`, status: 200 });
    await replay({ path: "/events?after=x", status: 400 });
  });

  it("both data versions, prefixed and at the root with and without X-API-Version", { timeout: 180_000 }, async () => {
    for (const path of ["/v1/cars?month=2021-01", "/v1/cars/makes", "/v1/coe/latest", "/v1/pqp", "/v1/health"]) {
      await replay({ path, status: 200 });
    }
    for (const path of [
      "/v2/cars?month=2021-01&limit=5",
      "/v2/cars/compare?month=2021-01",
      "/v2/coe?page=2",
      "/v2/pqp",
    ]) {
      await replay({ path, status: 200 });
    }
    const versions: Record<string, string>[] = [{}, { "X-API-Version": "1" }, { "X-API-Version": "2" }];
    for (const headers of versions) {
      await replay({ path: "/cars?month=2021-01", headers, status: 200 });
      await replay({ path: "/coe/latest", headers, status: 200 });
      await replay({ path: "/pqp", headers, status: 200 });
      await replay({ path: "/cars?month=2021-13", headers, status: 400 });
    }
    await replay({ path: "/health", headers: { "X-API-Version": "2" }, status: 404 });
    await replay({ path: "/cars", headers: { "X-API-Version": "3" }, status: 400 });
    await replay({ path: "/v2/cars/compare", status: 400 });
    await replay({ path: "/v1/cars?month=2021-13", status: 400 });
  });
});
