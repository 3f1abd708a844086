import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "./helpers/spawn.js";

// scripts/healthcheck.mjs, the image's and compose's health check, against
// /readyz's contract (docs/operations.md): 200 ready, 503 not ready or shutting down.
let readyz = 200;
const requested: string[] = [];
let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => {
    requested.push(`${req.method} ${req.url}`);
    res.writeHead(req.url === "/readyz" ? readyz : 404, { "Content-Type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const healthcheck = (env: Record<string, string>) =>
  run(process.execPath, ["scripts/healthcheck.mjs"], { ...process.env, ...env });

describe("the container health check", () => {
  it("is healthy while /readyz answers 200", async () => {
    readyz = 200;
    requested.length = 0;
    expect((await healthcheck({ PORT: String(port) })).code).toBe(0);
    expect(requested).toEqual(["GET /readyz"]);
  });

  it("is unhealthy while /readyz answers 503", async () => {
    readyz = 503;
    expect((await healthcheck({ PORT: String(port) })).code).toBe(1);
  });

  it("is unhealthy when nothing listens on PORT", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const unused = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect((await healthcheck({ PORT: String(unused) })).code).toBe(1);
  });
});
