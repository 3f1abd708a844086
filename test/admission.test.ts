import { afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { leasePath, runningAgent } from "./helpers/leases.js";
import { holdAgentsWriteLock } from "./helpers/write-lock.js";

// Admission control with bounded queueing: MAX_IN_FLIGHT requests at once,
// a short line behind them (MAX_QUEUED, MAX_QUEUE_MS), 503 + Retry-After
// beyond; long polls wait outside the slots.
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const overloaded = { error: "unavailable", message: "The service is overloaded; retry shortly" };

describe("admission", () => {
  it("a request waits in line for a slot and is served when one frees within MAX_QUEUE_MS", async () => {
    app = await startTestApp({ MAX_IN_FLIGHT: "1", MAX_QUEUED: "10", MAX_QUEUE_MS: "10000" });
    // A create waiting for the agents table's write lock holds the only slot until the lock goes.
    const lock = await holdAgentsWriteLock(app.database.url);
    const held = app.request("/agents", { method: "POST", json: { name: "held", type: "worker" } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const waiting = app.request("/agents?limit=1");
    await new Promise((resolve) => setTimeout(resolve, 300));
    await lock.release();
    expect((await held).status).toBe(201);
    expect((await waiting).status).toBe(200);
  });

  it("a request that waited MAX_QUEUE_MS gets 503 + Retry-After, soon after", async () => {
    app = await startTestApp({ MAX_IN_FLIGHT: "1", MAX_QUEUED: "10", MAX_QUEUE_MS: "200" });
    const lock = await holdAgentsWriteLock(app.database.url);
    const held = app.request("/agents", { method: "POST", json: { name: "held", type: "worker" } });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = performance.now();
      const res = await app.request("/agents?limit=1");
      const took = performance.now() - started;
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.json()).toEqual(overloaded);
      expect(took).toBeGreaterThanOrEqual(190);
      expect(took).toBeLessThan(2000);
    } finally {
      await lock.release();
    }
    expect((await held).status).toBe(201);
  });

  it("beyond MAX_QUEUED waiting, a request gets 503 at once", async () => {
    app = await startTestApp({ MAX_IN_FLIGHT: "1", MAX_QUEUED: "1", MAX_QUEUE_MS: "10000" });
    const lock = await holdAgentsWriteLock(app.database.url);
    const held = app.request("/agents", { method: "POST", json: { name: "held", type: "worker" } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const waiting = app.request("/agents?limit=1");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    const refused = await app.request("/agents?limit=1");
    expect(refused.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(1000);
    await lock.release();
    expect((await held).status).toBe(201);
    expect((await waiting).status).toBe(200);
  });

  it("a lease long poll waits without holding a slot, bounded by MAX_LONG_POLLS", async () => {
    app = await startTestApp({ MAX_IN_FLIGHT: "1", MAX_QUEUED: "0", MAX_LONG_POLLS: "1" });
    const agent = await runningAgent(app);
    const served = app;
    const poll = served.request(leasePath(agent.id), { method: "POST", json: { worker: "w", wait_seconds: 3 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The only slot is free for others while the poll waits; a second poll is over its own bound.
    expect((await served.request("/agents?limit=1")).status).toBe(200);
    const second = await served.request(leasePath(agent.id), {
      method: "POST",
      json: { worker: "w2", wait_seconds: 3 },
    });
    expect(second.status).toBe(503);
    expect(await second.json()).toEqual(overloaded);
    expect((await poll).status).toBe(204);
  });
});
