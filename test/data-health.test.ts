import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { connectDatabase, type Database } from "../src/db/index.js";
import { createLogger } from "../src/logger.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { get } from "./helpers/data.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe("GET /v1/health", () => {
  it("reports the service, its version and a database that answers", async () => {
    for (const path of ["/v1/health", "/health"]) {
      const { res, body } = await get(app, path);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-api-version")).toBe("1");
      expect(body).toEqual({
        status: "ok",
        database: "ok",
        version: packageJson.version,
        uptime_s: expect.any(Number),
      });
      expect(Number.isInteger(body.uptime_s)).toBe(true);
      expect(body.uptime_s).toBeGreaterThanOrEqual(0);
    }
  });
});

describe("GET /v1/health with a database that does not answer", () => {
  // A PostgreSQL database that does not exist: every query fails, as when the server is down.
  let db: Database;
  let baseUrl: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    db = await connectDatabase("postgresql://postgres@127.0.0.1:5432/no_such_database_for_health");
    const config = loadConfig({ SEED_SAMPLE_DATA: "false" });
    const server = createServer(
      createApp({ db, config, logger: createLogger("silent"), shutdown: new AbortController().signal }),
    ).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.close();
    };
  });
  afterAll(() => close());

  it("answers 503 with the database's state", async () => {
    const res = await fetch(`${baseUrl}/v1/health`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.headers.get("x-api-version")).toBe("1");
    expect(await res.json()).toEqual({ status: "unavailable", database: "unreachable" });
  });

  it("lets a data route fail in its version's format, never the agents' one", async () => {
    const v1 = await fetch(`${baseUrl}/v1/pqp`);
    expect(v1.status).toBe(503);
    expect(v1.headers.get("retry-after")).toBe("5");
    expect(await v1.json()).toEqual({
      error: { code: "SERVICE_UNAVAILABLE", message: "The database is unavailable; retry shortly", details: [] },
    });
    const v2 = await fetch(`${baseUrl}/v2/pqp`);
    expect(v2.status).toBe(503);
    expect(await v2.json()).toEqual({ error: "The database is unavailable; retry shortly" });
  });
});
