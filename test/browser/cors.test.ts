import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { browserForFile } from "../helpers/browser.js";

// docs/http.md in Chromium: a page on another origin calls the API with a
// request that needs a preflight (JSON body, Idempotency-Key). The API is at
// 127.0.0.1, the pages at localhost on two ports: two origins, one allowed.
let app: TestApp;
const pages: Server[] = [];
const browser = browserForFile();

async function pageServer(): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end("<!DOCTYPE html><title>front end</title><p>front end</p>");
  }).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  pages.push(server);
  return `http://localhost:${(server.address() as AddressInfo).port}`;
}

let allowedOrigin: string;
let otherOrigin: string;
beforeAll(async () => {
  allowedOrigin = await pageServer();
  otherOrigin = await pageServer();
  app = await startTestApp({ CORS_ORIGINS: allowedOrigin });
});
afterAll(async () => {
  await browser.close();
  await app.close();
  for (const server of pages) await new Promise((resolve) => server.close(resolve));
});

/** Opens the front end at `origin` and has it create an agent through the API. */
async function createFrom(origin: string, name: string) {
  const context = await (await browser.get()).newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    return await page.evaluate(
      async ({ api, name }) => {
        try {
          const res = await fetch(`${api}/agents`, {
            method: "POST",
            headers: { "Content-Type": "application/json", "Idempotency-Key": `browser-${name}` },
            body: JSON.stringify({ name, type: "worker" }),
          });
          return {
            status: res.status,
            location: res.headers.get("Location"),
            etag: res.headers.get("ETag"),
            requestId: res.headers.get("X-Request-Id"),
          };
        } catch (error) {
          return { failed: String(error) };
        }
      },
      { api: app.baseUrl, name },
    );
  } finally {
    await context.close();
  }
}

const agentsNamed = async (name: string) =>
  ((await (await app.request("/agents?limit=1000")).json()) as { id: string; name: string }[]).filter(
    (a) => a.name === name,
  );

describe("a front end on another origin, in Chromium", { timeout: 90_000 }, () => {
  it("calls the API after a preflight when its origin is allowed, and reads the exposed headers", async () => {
    const result = await createFrom(allowedOrigin, "from-allowed");
    const [agent] = await agentsNamed("from-allowed");
    expect(result).toEqual({
      status: 201,
      location: `/agents/${agent?.id}`,
      etag: '"1"',
      requestId: expect.any(String),
    });
  });

  it("is refused by the browser when its origin is not allowed, and nothing is created", async () => {
    const result = await createFrom(otherOrigin, "from-other");
    expect(result).toEqual({ failed: "TypeError: Failed to fetch" });
    expect(await agentsNamed("from-other")).toEqual([]);
  });
});
