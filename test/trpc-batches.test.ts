import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";

// A /trpc batch holds at most TRPC_MAX_BATCH_SIZE calls: one request cannot
// do the work (or write the log lines) of a thousand.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ TRPC_MAX_BATCH_SIZE: "3" });
});
afterAll(() => app.close());

const names = (procedure: string, count: number) => Array.from({ length: count }, () => procedure).join(",");
const creates = (count: number) =>
  JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, i) => [i, { name: `b-${i}`, type: "worker" }])));
const agentCount = async () => ((await (await app.request("/agents?limit=1000")).json()) as unknown[]).length;

describe("tRPC batches", () => {
  it("a batch of the limit is served", async () => {
    const before = await agentCount();
    const res = await app.request(`/trpc/${names("agents.create", 3)}?batch=1`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: creates(3),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBe(3);
    expect(await agentCount()).toBe(before + 3);
  });

  it("a batch over the limit is refused with 400 in tRPC's format and creates nothing", async () => {
    const before = await agentCount();
    for (const size of [4, 1100]) {
      const res = await app.request(`/trpc/${names("agents.create", size)}?batch=1`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: creates(size),
      });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      // One error for the request (not one per call), as tRPC answers a request it cannot run.
      expect(await res.json()).toEqual({
        error: {
          message: "Request validation failed: input: Batch call exceeds maximum size",
          code: -32600,
          data: {
            code: "BAD_REQUEST",
            httpStatus: 400,
            error: "validation_error",
            details: { issues: [{ field: "input", message: "Batch call exceeds maximum size" }] },
          },
        },
      });
    }
    expect(await agentCount()).toBe(before);
  });

  it("a refused batch of 1,100 names writes one log line, at info, without a stack", async () => {
    const from = app.logs.length;
    const res = await app.request(`/trpc/${names("agents.create", 1100)}?batch=1&input=%7B%7D`);
    expect(res.status).toBe(400);
    await res.arrayBuffer();
    await expect.poll(() => app.logs.length).toBeGreaterThan(from);
    const written = app.logs.slice(from);
    expect(written).toEqual([expect.objectContaining({ level: "info", msg: "request", status: 400 })]);
    expect(JSON.stringify(written)).not.toMatch(/stack|\\n\s+at /);
  });
});
