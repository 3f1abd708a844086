import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendPath, sendRaw } from "./helpers/raw-http.js";
import { startServedApp } from "./helpers/served.js";

// Requests Node's HTTP parser refuses before any route sees them are answered
// in the service's own format (docs/http.md, docs/errors.md; tRPC's envelope on /trpc, docs/clients.md), with X-Request-Id, instead of Node's bare status line.
let app: Awaited<ReturnType<typeof startServedApp>>;
beforeAll(async () => {
  app = await startServedApp({ HEADERS_TIMEOUT_SECONDS: "1", BODY_TIMEOUT_SECONDS: "1" });
});
afterAll(() => app.close());

const requestId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const tooLarge = "The request line and headers are over 16384 bytes";
const trpcTooLarge = {
  error: {
    message: tooLarge,
    code: -32013,
    data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 431, error: "headers_too_large" },
  },
};
const notHttp = {
  error: "validation_error",
  message: "Request validation failed: request: is not a well-formed HTTP/1.1 request",
  details: { issues: [{ field: "request", message: "is not a well-formed HTTP/1.1 request" }] },
};

/** A GET batch of `calls` agents.get whose input, URL-encoded, takes about `bytes`. */
const longBatch = (calls: number, bytes: number) => {
  const id = "a".repeat(Math.ceil(bytes / calls));
  const input = Object.fromEntries(Array.from({ length: calls }, (_, i) => [String(i), { agent_id: id }]));
  return `/trpc/${Array(calls).fill("agents.get").join(",")}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`;
};

/** A JSON answer whose connection closes; its id is a new one unless the request's own is known. */
const expectJsonHeaders = (headers: Record<string, unknown>, id: unknown = expect.stringMatching(requestId)) => {
  expect(headers["content-type"]).toBe("application/json; charset=utf-8");
  expect(headers["x-request-id"]).toEqual(id);
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers.connection).toBe("close");
};

describe("a request line and headers over Node's 16 KiB", () => {
  it("a tRPC query whose input makes the URL too long: 431, one error for the request in tRPC's format", async () => {
    const input = encodeURIComponent(JSON.stringify({ agent_id: "a".repeat(20_000) }));
    const res = await sendPath(app.baseUrl, "GET", `/trpc/agents.get?input=${input}`);
    expect(res.status).toBe(431);
    expectJsonHeaders(res.headers);
    expect(JSON.parse(res.body)).toEqual(trpcTooLarge);
  });

  it("a batch URL of 100 kB or 1 MB gets its answer, never a reset while the client still sends it", async () => {
    for (const bytes of [100_000, 1_000_000]) {
      for (let i = 0; i < 3; i++) {
        const res = await sendPath(app.baseUrl, "GET", longBatch(5, bytes));
        expect(res.status).toBe(431);
        expect(JSON.parse(res.body)).toEqual(trpcTooLarge);
      }
    }
  });

  it("a REST request with a header over the limit: 431 in docs/errors.md's format; the service goes on serving", async () => {
    const res = await sendPath(app.baseUrl, "GET", "/agents", { headers: { "x-long": "a".repeat(20_000) } });
    expect(res.status).toBe(431);
    expectJsonHeaders(res.headers);
    expect(JSON.parse(res.body)).toEqual({ error: "headers_too_large", message: tooLarge });
    expect((await app.request("/agents?limit=1")).status).toBe(200);
  });

  it("is logged as any request is: one line with its id, method, path and status", async () => {
    const res = await sendPath(app.baseUrl, "GET", "/agents", { headers: { "x-long": "a".repeat(20_000) } });
    await expect
      .poll(() => app.logs.filter((line) => line.request_id === res.headers["x-request-id"]))
      .toEqual([
        expect.objectContaining({
          level: "info",
          msg: "request",
          method: "GET",
          path: "/agents",
          status: 431,
          parse_error: "HPE_HEADER_OVERFLOW",
        }),
      ]);
  });
});

describe("bytes that are not HTTP/1.1", () => {
  it.each([
    "GARBAGE /agents HTTP/1.1\r\nHost: x\r\n\r\n",
    "GET /agents HTTP/9.9\r\nHost: x\r\n\r\n",
    "POST /agents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
  ])("%j: 400 in docs/errors.md's format, and the connection closed", async (text) => {
    const res = await sendRaw(app.baseUrl, text);
    expect(res.status).toBe(400);
    expectJsonHeaders(res.headers);
    expect(JSON.parse(res.body)).toEqual(notHttp);
  });

  it("on /trpc: 400 in tRPC's format", async () => {
    const res = await sendRaw(app.baseUrl, "GET /trpc/agents.list HTTP/1.1\r\nHost: x\r\nX-Nul: a\u0000b\r\n\r\n");
    expect(res.status).toBe(400);
    expectJsonHeaders(res.headers);
    expect(JSON.parse(res.body)).toEqual({
      error: {
        message: notHttp.message,
        code: -32600,
        data: { code: "BAD_REQUEST", httpStatus: 400, error: "validation_error", details: notHttp.details },
      },
    });
  });
});

describe("a request that does not arrive within the timeouts", () => {
  it("a head still incomplete after HEADERS_TIMEOUT_SECONDS: 408 in docs/errors.md's format", async () => {
    const res = await sendRaw(app.baseUrl, "GET /agents HTTP/1.1\r\nHost: x\r\n");
    expect(res.status).toBe(408);
    expectJsonHeaders(res.headers);
    expect(JSON.parse(res.body)).toEqual({ error: "request_timeout", message: "The request did not arrive in time" });
  });

  it("a body that stops arriving on /trpc: 408 in tRPC's format, with the request's own id", async () => {
    const res = await sendRaw(
      app.baseUrl,
      "POST /trpc/agents.create HTTP/1.1\r\nHost: x\r\nX-Request-Id: slow-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    expect(res.status).toBe(408);
    expectJsonHeaders(res.headers, "slow-1");
    expect(JSON.parse(res.body)).toEqual({
      error: {
        message: "The request did not arrive in time",
        code: -32008,
        data: { code: "TIMEOUT", httpStatus: 408, error: "request_timeout" },
      },
    });
  });
});
