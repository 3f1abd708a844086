import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServedApp } from "./helpers/served.js";

// Slow clients cost a socket each, never a request slot, and not for long:
// the head within HEADERS_TIMEOUT_SECONDS, the body within BODY_TIMEOUT_SECONDS,
// and at most MAX_CONNECTIONS_PER_CLIENT connections per client address.
let app: Awaited<ReturnType<typeof startServedApp>>;
beforeAll(async () => {
  app = await startServedApp({
    MAX_IN_FLIGHT: "1",
    MAX_QUEUED: "0",
    HEADERS_TIMEOUT_SECONDS: "1",
    BODY_TIMEOUT_SECONDS: "1",
    MAX_CONNECTIONS_PER_CLIENT: "30",
  });
});
afterAll(() => app.close());

/** A connection from `localAddress` that has written `text` and keeps the rest back. */
function holdOpen(text: string, localAddress = "127.0.0.1") {
  const socket = connect({ host: "127.0.0.1", port: app.port, localAddress });
  let received = "";
  socket.on("data", (chunk) => {
    received += chunk;
  });
  socket.on("error", () => {});
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(performance.now())));
  socket.write(text);
  return { socket, closed, received: () => received };
}

const slowUpload = (localAddress?: string) =>
  holdOpen(
    "POST /agents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    localAddress,
  );

const closeAll = (sockets: { socket: Socket }[]) => {
  for (const { socket } of sockets) socket.destroy();
};

describe("slow clients", () => {
  it("uploads that never finish hold no request slot: others are served meanwhile", async () => {
    const uploads = Array.from({ length: 20 }, () => slowUpload());
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (let i = 0; i < 5; i++) {
        expect((await app.request("/agents")).status).toBe(200);
        const created = await app.request("/agents", { method: "POST", json: { name: `n-${i}`, type: "worker" } });
        expect(created.status).toBe(201);
      }
    } finally {
      closeAll(uploads);
    }
  });

  it("a body that does not arrive within BODY_TIMEOUT_SECONDS gets 408 and its connection closed", async () => {
    const started = performance.now();
    const upload = slowUpload();
    const closedAt = await upload.closed;
    expect(upload.received()).toMatch(/^HTTP\/1\.1 408 /);
    // One second for the head and body, checked every second: well within 4 s.
    expect(closedAt - started).toBeLessThan(4000);
  });

  it("a head that does not arrive within HEADERS_TIMEOUT_SECONDS gets 408 and its connection closed", async () => {
    const started = performance.now();
    const slowloris = holdOpen("GET /agents HTTP/1.1\r\nHost: x\r\n");
    const closedAt = await slowloris.closed;
    expect(slowloris.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAt - started).toBeLessThan(4000);
  });

  it("one client address holds at most MAX_CONNECTIONS_PER_CLIENT connections; others still connect", async () => {
    const held = Array.from({ length: 30 }, () => holdOpen("GET /agents HTTP/1.1\r\n", "127.0.0.3"));
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const extra = holdOpen("GET /agents HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "127.0.0.3");
      await extra.closed;
      expect(extra.received()).toBe("");
      const other = holdOpen("GET /agents?limit=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "127.0.0.4");
      await other.closed;
      expect(other.received()).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      closeAll(held);
    }
  });

  it("idle keep-alive connections are announced and closed after KEEP_ALIVE_TIMEOUT_SECONDS (5 s)", async () => {
    const res = await app.request("/agents?limit=1");
    expect(res.headers.get("keep-alive")).toBe("timeout=5");
  });
});
