import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { currentTraceId } from "../src/telemetry/trace-id.js";
import { createTestDatabase, type TestDatabase, testProvider } from "./helpers/databases.js";
import { startOtlpReceiver } from "./helpers/otlp-receiver.js";
import { followStart } from "./helpers/spawn.js";

// docs/operations.md: with OTEL_EXPORTER_OTLP_ENDPOINT set, every request's and
// PostgreSQL query's spans are exported over OTLP/HTTP (JSON here), continuing
// an incoming `traceparent`; unset, no tracing code is loaded.
const moduleLog = fileURLToPath(new URL("helpers/module-log.mjs", import.meta.url));
const logs = mkdtempSync(join(tmpdir(), "agents-telemetry-"));
// The SDK, exporter and instrumentations: tracing code. @opentelemetry/api alone is left out: it
// is a no-op façade until an SDK registers, and prom-client's process metrics (GET /metrics) load it.
const otelModule = /\/node_modules\/@opentelemetry\/(?!api\/)/;

let database: TestDatabase;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  database = await createTestDatabase(inject("templateDatabase"));
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await receiver.close();
  await database.drop();
  rmSync(logs, { recursive: true, force: true });
});

/** A real process from the sources, every module it loads written to `modules`; resolves its port. */
function start(args: string[], env: Record<string, string>, modules: string) {
  const child = spawn(process.execPath, ["--import", "tsx", "--import", moduleLog, ...args], {
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      PORT: "0",
      SEED_SAMPLE_DATA: "false",
      LOG_LEVEL: "info",
      MODULE_LOG: modules,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const { port, exited } = followStart(child);
  const stop = async () => {
    child.kill("SIGTERM");
    const code = await exited;
    children.delete(child);
    return code;
  };
  return { port, stop };
}

const loadedModules = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean);
const traceparent = () => {
  const traceId = randomBytes(16).toString("hex");
  const parentId = randomBytes(8).toString("hex");
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
};

describe("with OTEL_EXPORTER_OTLP_ENDPOINT set", () => {
  const modules = join(logs, "traced.log");
  let service: ReturnType<typeof start>;
  let baseUrl: string;
  beforeAll(async () => {
    // A short batch delay, so spans arrive within a test's patience.
    service = start(
      ["src/main.ts"],
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" },
      modules,
    );
    baseUrl = `http://127.0.0.1:${await service.port}`;
  });

  it("exports the request's spans in the incoming traceparent's trace, under its parent", async () => {
    const incoming = traceparent();
    const response = await fetch(`${baseUrl}/agents`, { headers: { traceparent: incoming.header } });
    expect(response.status).toBe(200);

    const server = await receiver.waitForSpan((span) => span.traceId === incoming.traceId && span.kind === 2);
    expect(server).toMatchObject({
      scope: "@opentelemetry/instrumentation-http",
      name: "GET",
      parentSpanId: incoming.parentId,
    });
    expect(server.attributes["http.response.status_code"] ?? server.attributes["http.status_code"]).toBe(200);
  });

  // SQLite (better-sqlite3) has no official instrumentation: its queries are not traced.
  const onPostgres = testProvider === "postgresql" ? it : undefined;
  onPostgres?.("exports the request's PostgreSQL query as a span of the same trace", async () => {
    const incoming = traceparent();
    const response = await fetch(`${baseUrl}/agents`, { headers: { traceparent: incoming.header } });
    expect(response.status).toBe(200);

    const query = await receiver.waitForSpan(
      (span) => span.traceId === incoming.traceId && span.kind === 3 && span.name.startsWith("pg.query"),
    );
    expect(query.scope).toBe("@opentelemetry/instrumentation-pg");
    expect(query.attributes["db.system.name"]).toBe("postgresql");
    expect(query.attributes["db.query.text"]).toMatch(/FROM agents/);
  });

  it("sends OTLP/HTTP with JSON bodies to /v1/traces", () => {
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      expect(request).toEqual({ method: "POST", path: "/v1/traces", contentType: "application/json" });
    }
  });

  it("flushes on SIGTERM and exits 0, having loaded the OpenTelemetry SDK", async () => {
    expect(await service.stop()).toBe(0);
    expect(loadedModules(modules).some((module) => otelModule.test(module))).toBe(true);
  });
});

describe("with OTEL_EXPORTER_OTLP_ENDPOINT unset", () => {
  // Starting a process takes a while on a loaded machine (and on PostgreSQL, migrating does).
  it("loads no OpenTelemetry module and serves traceparent requests as before", { timeout: 60_000 }, async () => {
    const modules = join(logs, "untraced.log");
    const service = start(["src/main.ts"], { OTEL_EXPORTER_OTLP_ENDPOINT: "" }, modules);
    const port = await service.port;
    const response = await fetch(`http://127.0.0.1:${port}/agents`, { headers: { traceparent: traceparent().header } });
    expect(response.status).toBe(200);
    expect(await service.stop()).toBe(0);

    const loaded = loadedModules(modules);
    // The log saw the app's own modules, so its silence on OpenTelemetry means something.
    expect(loaded.some((module) => module.includes("/node_modules/express/"))).toBe(true);
    expect(loaded.filter((module) => otelModule.test(module))).toEqual([]);
    expect(currentTraceId()).toBeUndefined();
  });
});

describe("OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it.each(["collector:4318", "grpc://127.0.0.1:4317", "not a url"])("refuses %s in one line naming it", (value) => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: value })).toThrow(
      /^Invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL$/,
    );
  });

  it("takes an http(s) URL; empty is unset", () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).otlpEndpoint).toBe(
      "http://127.0.0.1:4318",
    );
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "" }).otlpEndpoint).toBeUndefined();
  });
});

describe("currentTraceId(), for the request's log line", () => {
  it("is the trace id of the request being served", { timeout: 60_000 }, async () => {
    const fixture = fileURLToPath(new URL("helpers/trace-id-server.ts", import.meta.url));
    const server = start([fixture], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, join(logs, "trace-id.log"));
    const url = `http://127.0.0.1:${await server.port}/`;

    const incoming = traceparent();
    expect(await (await fetch(url, { headers: { traceparent: incoming.header } })).text()).toBe(incoming.traceId);
    // Without a traceparent the request starts a trace of its own.
    const fresh = await (await fetch(url)).text();
    expect(fresh).toMatch(/^[0-9a-f]{32}$/);
    expect(fresh).not.toBe(incoming.traceId);
    expect(await server.stop()).toBeNull();
  });
});
