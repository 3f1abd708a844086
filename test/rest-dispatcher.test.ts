import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../src/config.js";
import { notFound } from "../src/errors.js";
import { admission } from "../src/http/guards/admission.js";
import { sendRestError } from "../src/http/respond.js";
import { createDispatcher, type PathHandler } from "../src/http/rest/dispatcher.js";
import { procedureRoutes } from "../src/http/rest/procedures.js";
import { restResources } from "../src/http/rest/resource.js";
import { RouteTable } from "../src/http/rest/table.js";
import { createLogger } from "../src/logger.js";
import { authenticator } from "../src/modules/auth/authenticator.js";
import { publicProcedure, router } from "../src/trpc/procedures.js";
import type { ServerSentEvent } from "../src/trpc/server-sent-events.js";
import { createTestDatabase, type TestDatabase } from "./helpers/databases.js";

// What a later feature gets from the dispatcher by meta alone: a router of
// its own, served by the real dispatcher with no change to it.
const item = z.object({ id: z.string(), version: z.int() });
let stopped = 0;
const testRouter = router({
  item: publicProcedure
    .meta({
      openapi: { method: "GET", path: "/items/{id}" },
      responseHeaders: (data) => ({ ETag: `"${item.parse(data).version}"` }),
    })
    .input(z.object({ id: z.string() }))
    .output(item)
    .query(({ input }) => ({ id: input.id, version: 7 })),
  remove: publicProcedure
    .meta({ openapi: { method: "DELETE", path: "/items/{id}" }, successStatus: 204 })
    .input(z.object({ id: z.string() }))
    .output(z.void())
    .mutation(() => undefined),
  ticks: publicProcedure
    .meta({ openapi: { method: "GET", path: "/ticks" }, stream: "sse" })
    .input(z.object({ count: z.int().min(1).max(1000), forever: z.boolean().optional() }))
    .output(z.custom<AsyncIterable<ServerSentEvent>>((value) => typeof value === "object" && value !== null))
    .query(async function* ({ input, signal }): AsyncGenerator<ServerSentEvent> {
      try {
        for (let i = 1; input.forever || i <= input.count; i++) {
          yield { id: String(i), event: "tick", data: { i, note: "two\nlines" } };
          if (input.forever) await sleep(5, undefined, { signal });
        }
      } finally {
        if (input.forever) stopped++;
      }
    }),
});

let database: TestDatabase;
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  database = await createTestDatabase(inject("templateDatabase"));
  const deps = {
    db: database.db,
    config: loadConfig({ SEED_SAMPLE_DATA: "false" }),
    logger: createLogger("silent"),
    shutdown: new AbortController().signal,
    auth: authenticator(loadConfig({ SEED_SAMPLE_DATA: "false" })),
  };
  const table = new RouteTable<PathHandler>();
  for (const [path, handler] of restResources(procedureRoutes(testRouter, deps.config.bodyLimit), deps)) {
    table.add(path, handler);
  }
  const dispatch = createDispatcher({
    table,
    admission: admission(deps.config.load, database.db.provider),
    bodyLimit: deps.config.bodyLimit,
    logger: deps.logger,
    admitsItself: () => false,
    fallback: (_req, res) => sendRestError(res, notFound()),
  });
  server = createServer(dispatch);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await database.drop();
});

describe("meta the dispatcher reads", () => {
  it("responseHeaders: headers derived from the result (an ETag from a version)", async () => {
    const res = await fetch(`${baseUrl}/items/a1`);
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe('"7"');
    expect(await res.json()).toEqual({ id: "a1", version: 7 });
  });

  it("successStatus 204: no body and no Content-Type", async () => {
    const res = await fetch(`${baseUrl}/items/a1`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(res.headers.get("content-type")).toBeNull();
    expect(await res.text()).toBe("");
  });

  it("405 with Allow from the procedures at the path; HEAD answers as GET without a body", async () => {
    const res = await fetch(`${baseUrl}/items/a1`, { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, DELETE");
    const head = await fetch(`${baseUrl}/items/a1`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe('"7"');
    expect(head.headers.get("content-length")).toBe(String(JSON.stringify({ id: "a1", version: 7 }).length));
    expect(await head.text()).toBe("");
  });

  it('stream "sse": the events as text/event-stream, then the end', async () => {
    const res = await fetch(`${baseUrl}/ticks?count=3`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toBe(
      [1, 2, 3].map((i) => `id: ${i}\nevent: tick\ndata: {"i":${i},"note":"two\\nlines"}\n\n`).join(""),
    );
  });

  it("a stream's input is validated before any event is sent", async () => {
    const res = await fetch(`${baseUrl}/ticks?count=0`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("validation_error");
  });

  it("a client that leaves stops the stream: the procedure's signal aborts", async () => {
    const before = stopped;
    const leave = new AbortController();
    const res = await fetch(`${baseUrl}/ticks?count=1&forever=true`, { signal: leave.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toMatch(/^id: 1\nevent: tick\n/);
    leave.abort();
    await expect.poll(() => stopped, { timeout: 5_000 }).toBe(before + 1);
  });
});
