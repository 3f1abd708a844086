import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { connectDatabase, type Database } from "../src/db/index.js";
import { createLogger } from "../src/logger.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { holdAgentsWriteLock } from "./helpers/write-lock.js";

// Overload and an unreachable database answer 503 in the format of the route
// that was hit: a versioned route in its version's format, with X-API-Version.

const overloaded = "The service is overloaded; retry shortly";
const databaseDown = "The database is unavailable; retry shortly";

/** What each kind of route answers with 503, in its own format. */
async function expectFormats(baseUrl: string, message: string, retryAfter: string) {
  const fetchFrom = (path: string, init?: RequestInit) => fetch(`${baseUrl}${path}`, init);
  const check = async (res: Response, body: unknown, headers: Record<string, string | null> = {}) => {
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe(retryAfter);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    for (const [name, value] of Object.entries(headers)) expect(res.headers.get(name), name).toBe(value);
    expect(await res.json()).toEqual(body);
  };
  const v1 = { error: { code: "SERVICE_UNAVAILABLE", message, details: [] } };
  const v2 = { error: message };
  await check(await fetchFrom("/v1/cars?month=2021-01"), v1, { "x-api-version": "1", vary: null });
  await check(await fetchFrom("/v2/coe"), v2, { "x-api-version": "2" });
  await check(await fetchFrom("/cars/makes"), v1, { "x-api-version": "1", vary: "X-API-Version" });
  await check(await fetchFrom("/pqp", { headers: { "X-API-Version": "2" } }), v2, {
    "x-api-version": "2",
    vary: "X-API-Version",
  });
  await check(await fetchFrom("/agents"), { error: "unavailable", message });
  await check(await fetchFrom(`/trpc/agents.list?input=${encodeURIComponent("{}")}`), {
    error: {
      message,
      code: TRPC_ERROR_CODES_BY_KEY.SERVICE_UNAVAILABLE,
      data: { code: "SERVICE_UNAVAILABLE", httpStatus: 503, path: "agents.list", error: "unavailable" },
    },
  });
}

describe("overload (MAX_IN_FLIGHT=1)", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ MAX_IN_FLIGHT: "1", MAX_QUEUED: "0" }, { sampleData: true });
  });
  afterAll(() => app.close());

  it("answers 503 + Retry-After in each route's format while a request holds the only slot", async () => {
    // A create waiting for the table's write lock holds the only slot.
    const lock = await holdAgentsWriteLock(app.database.url);
    const held = app.request("/agents", { method: "POST", json: { name: "held", type: "worker" } });
    try {
      await expect.poll(async () => (await app.request("/v2/cars")).status).toBe(503);
      await expectFormats(app.baseUrl, overloaded, "1");
      const token = await app.request("/token", { method: "POST", body: "username=a&password=b" });
      expect(token.status).toBe(503);
      expect(await token.json()).toEqual({ error: "unavailable", message: overloaded });
    } finally {
      await lock.release();
    }
    expect((await held).status).toBe(201);
    await expect.poll(async () => (await app.request("/v1/cars/makes")).status).toBe(200);
  });
});

describe("a database that does not answer", () => {
  let db: Database;
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    // Nothing listens on port 1: every query fails to connect.
    const url = "postgresql://postgres@127.0.0.1:1/test";
    db = await connectDatabase(url);
    server = createServer(
      createApp({
        db,
        config: loadConfig({ DATABASE_URL: url }),
        logger: createLogger("silent"),
        shutdown: new AbortController().signal,
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await db.close();
  });

  it("answers 503 + Retry-After in each route's format", async () => {
    await expectFormats(baseUrl, databaseDown, "5");
  });
});
