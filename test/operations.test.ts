import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { connectDatabase, type Database } from "../src/db/index.js";
import { createLogger } from "../src/logger.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { eventually, runningAgent, send, takeLease, taskPath } from "./helpers/leases.js";

// docs/operations.md: /livez, /readyz and /metrics.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ TASK_RETRY_BASE_SECONDS: "0.5" });
});
afterAll(() => app.close());

/** The app of `db` on a port of its own, with its shutdown signal in the test's hands. */
async function serve(db: Database, env: Record<string, string> = {}) {
  const shutdown = new AbortController();
  const config = loadConfig({ SEED_SAMPLE_DATA: "false", ...env });
  const server: Server = createServer(
    createApp({ db, config, logger: createLogger("silent"), shutdown: shutdown.signal }),
  );
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    shutdown,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A sample's value in the Prometheus text, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function metrics(base: Pick<TestApp, "request"> = app) {
  const res = await base.request("/metrics");
  expect(res.status).toBe(200);
  return res.text();
}

describe("GET /livez", () => {
  it("answers 200 while the process runs, uncached, in every method GET allows", async () => {
    const res = await app.request("/livez");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(await res.json()).toEqual({ status: "ok" });
    const head = await app.request("/livez", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("is 405 with Allow for other methods", async () => {
    const res = await app.request("/livez", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(await res.json()).toEqual({ detail: "Method Not Allowed" });
  });

  it("needs no credentials and is not logged at info", async () => {
    const secured = await startTestApp({ AUTH_POLICY: "all", API_KEYS: "k" });
    try {
      expect((await secured.request("/livez")).status).toBe(200);
      expect((await secured.request("/readyz")).status).toBe(200);
      expect((await secured.request("/metrics")).status).toBe(200);
      expect(secured.logs.filter((line) => String(line.path).match(/^\/(livez|readyz|metrics)$/))).toEqual([]);
    } finally {
      await secured.close();
    }
  });
});

describe("GET /readyz", () => {
  it("answers 200 when the database answers and no migration is pending", async () => {
    const res = await app.request("/readyz");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ status: "ready", database: "ok", migrations: "ok" });
  });

  it("answers 503 from the moment shutdown begins", async () => {
    const served = await serve(app.database.db);
    try {
      expect((await fetch(`${served.baseUrl}/readyz`)).status).toBe(200);
      served.shutdown.abort();
      const res = await fetch(`${served.baseUrl}/readyz`);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(await res.json()).toEqual({ status: "unavailable", database: "ok", migrations: "ok" });
      expect((await fetch(`${served.baseUrl}/livez`)).status).toBe(200);
    } finally {
      await served.close();
    }
  });

  it("answers 503 while a migration is pending", async () => {
    const pending = await startTestApp();
    try {
      await pending.database.db.prisma.$executeRawUnsafe(
        "DELETE FROM _prisma_migrations WHERE migration_name = (SELECT MAX(migration_name) FROM _prisma_migrations)",
      );
      const res = await pending.request("/readyz");
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: "unavailable", database: "ok", migrations: "pending" });
    } finally {
      await pending.close();
    }
  });

  it("answers 503 when the database does not answer", async () => {
    // A PostgreSQL database that does not exist: every query fails, as when the server is down.
    const db = await connectDatabase("postgresql://postgres@127.0.0.1:5432/no_such_database_for_readyz");
    const served = await serve(db);
    try {
      const res = await fetch(`${served.baseUrl}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: "unavailable", database: "unavailable", migrations: "unknown" });
      expect((await fetch(`${served.baseUrl}/livez`)).status).toBe(200);
    } finally {
      await served.close();
      await db.close();
    }
  });
});

describe("GET /metrics", () => {
  it("counts requests by route template, never by raw path", async () => {
    const agent = await createAgent(app);
    const before = await metrics();
    const series = 'http_requests_total{method="GET",route="/agents/{agent_id}",status="200"}';
    const missing = 'http_requests_total{method="GET",route="/agents/{agent_id}",status="404"}';
    const count = (text: string, name: string) => sample(text, name) ?? 0;
    expect((await app.request(`/agents/${agent.id}`)).status).toBe(200);
    expect((await app.request(`/agents/${agent.id}`)).status).toBe(200);
    expect((await app.request("/agents/not-an-id")).status).toBe(404);
    expect((await app.request("/no/such/path")).status).toBe(404);
    const after = await metrics();
    expect(count(after, series) - count(before, series)).toBe(2);
    expect(count(after, missing) - count(before, missing)).toBe(1);
    expect(after).not.toContain(agent.id);
    expect(after).not.toContain("/no/such/path");
    expect(after).toContain('http_requests_total{method="GET",route="unmatched",status="404"}');
    expect(after).toMatch(
      /^http_request_duration_seconds_bucket\{le="0\.1",method="GET",route="\/agents\/\{agent_id\}",status="200"\} \d+$/m,
    );
  });

  it("serves the Prometheus text format with Node's process metrics and every named series", async () => {
    const res = await app.request("/metrics");
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const text = await res.text();
    for (const name of [
      "process_cpu_seconds_total",
      "nodejs_eventloop_lag_seconds",
      "task_leases_expired_total",
      "task_retries_total",
      "event_streams_open",
      "rate_limited_total",
      "load_shed_total",
    ]) {
      expect(text, name).toMatch(new RegExp(`^# TYPE ${name} `, "m"));
    }
    expect(text).toMatch(/^# TYPE webhook_deliveries_total counter$/m);
  });

  it("has tasks{status} and agents{status} gauges with every status", async () => {
    const counts = await startTestApp();
    try {
      const agent = await createAgent(counts);
      await createTask(counts, agent.id);
      await createTask(counts, agent.id);
      const text = await metrics(counts);
      expect(sample(text, 'tasks{status="pending"}')).toBe(2);
      expect(sample(text, 'tasks{status="succeeded"}')).toBe(0);
      expect(sample(text, 'agents{status="idle"}')).toBe(1);
      expect(sample(text, 'agents{status="running"}')).toBe(0);
    } finally {
      await counts.close();
    }
  });

  it("counts retries and expired leases once each", { timeout: 30_000 }, async () => {
    const before = await metrics();
    const agent = await runningAgent(app);
    const reported = await createTask(app, agent.id, { max_attempts: 3 });
    const lease = await takeLease(app, agent.id, { duration_seconds: 5 });
    expect(lease.task_id).toBe(reported.id);
    const failed = await send(app, "PATCH", taskPath(reported), { status: "failed", lease_id: lease.id });
    expect(failed.status, failed.text).toBe(200);
    const afterReport = await metrics();
    expect(sample(afterReport, "task_retries_total")).toBe((sample(before, "task_retries_total") ?? 0) + 1);

    await takeLease(app, agent.id, { duration_seconds: 5, wait_seconds: 5 });
    const afterExpiry = await eventually(
      () => metrics(),
      (text) => sample(text, "task_leases_expired_total") !== sample(before, "task_leases_expired_total"),
      15_000,
    );
    expect(sample(afterExpiry, "task_leases_expired_total")).toBe(
      (sample(before, "task_leases_expired_total") ?? 0) + 1,
    );
    expect(sample(afterExpiry, "task_retries_total")).toBe((sample(before, "task_retries_total") ?? 0) + 2);
  });

  it("counts 429s of the rate limit and the event streams open", async () => {
    const limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: "1" });
    try {
      const before = await metrics(limited);
      expect((await limited.request("/agents")).status).toBe(200);
      expect((await limited.request("/agents")).status).toBe(429);
      expect(sample(await metrics(limited), "rate_limited_total")).toBe(
        (sample(before, "rate_limited_total") ?? 0) + 1,
      );
    } finally {
      await limited.close();
    }

    const open = sample(await metrics(), "event_streams_open") ?? 0;
    const leave = new AbortController();
    const stream = await fetch(`${app.baseUrl}/events/stream`, { signal: leave.signal });
    expect(stream.status).toBe(200);
    await eventually(
      () => metrics(),
      (text) => sample(text, "event_streams_open") === open + 1,
      5_000,
    );
    leave.abort();
    await eventually(
      () => metrics(),
      (text) => sample(text, "event_streams_open") === open,
      5_000,
    );
  });

  it("requires the bearer METRICS_TOKEN when it is set", async () => {
    const served = await serve(app.database.db, { METRICS_TOKEN: "scrape-secret" });
    try {
      const none = await fetch(`${served.baseUrl}/metrics`);
      expect(none.status).toBe(401);
      expect(none.headers.get("www-authenticate")).toBe("Bearer");
      expect(await none.json()).toEqual({ detail: "Not authenticated" });
      const wrong = await fetch(`${served.baseUrl}/metrics`, { headers: { authorization: "Bearer nope" } });
      expect(wrong.status).toBe(401);
      expect(await wrong.json()).toEqual({ detail: "Could not validate credentials" });
      const right = await fetch(`${served.baseUrl}/metrics`, { headers: { authorization: "Bearer scrape-secret" } });
      expect(right.status).toBe(200);
      expect(await right.text()).toContain("http_requests_total");
      expect((await fetch(`${served.baseUrl}/readyz`)).status).toBe(200);
    } finally {
      await served.close();
    }
  });
});
