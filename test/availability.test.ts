import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { connectDatabase } from "../src/db/index.js";
import { createLogger } from "../src/logger.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { holdAgentsWriteLock } from "./helpers/write-lock.js";

describe("a database that does not answer", () => {
  it("gives 503 unavailable with Retry-After, not 500", async () => {
    // Nothing listens on port 1: every query fails to connect.
    const url = "postgresql://postgres@127.0.0.1:1/test";
    const db = await connectDatabase(url);
    const app = createApp({
      db,
      config: loadConfig({ DATABASE_URL: url }),
      logger: createLogger("silent"),
      shutdown: new AbortController().signal,
    });
    const server = createServer(app).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as { port: number };
    try {
      const res = await fetch(`http://127.0.0.1:${port}/agents`);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(await res.json()).toEqual({
        error: "unavailable",
        message: "The database is unavailable; retry shortly",
      });
    } finally {
      server.close();
      await db.close();
    }
  });
});

describe("overload", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ MAX_IN_FLIGHT: "1", MAX_QUEUED: "0" });
  });
  afterAll(() => app.close());

  it("sheds requests beyond the in-flight bound with 503 + Retry-After, then recovers", async () => {
    // A create waiting for the table's write lock holds the only slot.
    const lock = await holdAgentsWriteLock(app.database.url);
    const held = app.request("/agents", { method: "POST", json: { name: "held", type: "worker" } });
    try {
      await expect
        .poll(async () => {
          const res = await app.request("/agents");
          return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() };
        })
        .toEqual({
          status: 503,
          retryAfter: "1",
          body: { error: "unavailable", message: "The service is overloaded; retry shortly" },
        });
    } finally {
      await lock.release();
    }
    expect((await held).status).toBe(201);
    await expect.poll(async () => (await app.request("/agents")).status).toBe(200);
  });
});
