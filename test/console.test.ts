import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleRouter } from "../src/http/console.js";

// docs/console.md: the console's page and assets as the service serves them.
describe("the console's files at /ui", () => {
  let dir: string;
  let server: Server;
  let origin: string;
  const asset = "index-AbC123.js";
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "console-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(
      join(dir, "index.html"),
      '<!doctype html><head></head><script type="module" src="/ui/assets/index-AbC123.js"></script>',
    );
    writeFileSync(join(dir, "assets", asset), "export {};\n");
    const app = express().use(consoleRouter("all", dir));
    server = createServer(app).listen(0, "127.0.0.1");
    await new Promise((listening) => server.once("listening", listening));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((closed) => server.close(closed));
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the page at /ui and at every path under it, never cached", async () => {
    for (const path of ["/ui", "/ui/", "/ui/agents/4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69", "/ui/keys"]) {
      const response = await fetch(`${origin}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      const page = await response.text();
      expect(page).toContain("/ui/assets/index-AbC123.js");
      // AUTH_POLICY, for the page to know whether to ask for a sign-in first.
      expect(page).toContain('<meta name="auth-policy" content="all" />');
    }
  });

  it("serves hashed assets for a year, immutable; a missing one is 404, never the page", async () => {
    const response = await fetch(`${origin}/ui/assets/${asset}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await response.text()).toBe("export {};\n");
    const missing = await fetch(`${origin}/ui/assets/index-missing.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: "No such asset" });
  });

  it("says the console is not built when it is not", async () => {
    const unbuilt = express().use(consoleRouter("open", join(dir, "nowhere")));
    const other = createServer(unbuilt).listen(0, "127.0.0.1");
    await new Promise((listening) => other.once("listening", listening));
    try {
      const response = await fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/ui`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ detail: "The console is not built: run npm run build" });
    } finally {
      await new Promise((closed) => other.close(closed));
    }
  });
});

// The console is a front end of the typed RPC: its sources reach the service through
// the tRPC client alone, typed by the router's own types (npm run lint type-checks them).
describe("the console's sources", () => {
  const root = new URL("../ui/src", import.meta.url).pathname;
  const sources = readdirSync(root, { recursive: true, encoding: "utf8" })
    .map((name) => join(root, name))
    .filter((path) => statSync(path).isFile() && /\.tsx?$/.test(path))
    .map((path) => ({ path: relative(root, path), text: readFileSync(path, "utf8") }));

  it("import the service only as types, from the router's types entry", () => {
    expect(sources.length).toBeGreaterThan(5);
    for (const { path, text } of sources) {
      const imports = [...text.matchAll(/^import (type )?[^;]*? from "([^"]+)";/gms)];
      for (const [, typeOnly, from] of imports) {
        if (from?.startsWith(".") || from === "react" || from?.startsWith("react-dom") || from === "eventsource")
          continue;
        if (from?.startsWith("@tanstack/") || from?.startsWith("@trpc/client") || from === "@trpc/tanstack-react-query")
          continue;
        expect({ path, from, typeOnly }).toEqual({ path, from: "agent-management-sdk/client", typeOnly: "type " });
      }
      // Nothing of the server's sources, by any path.
      expect(text, path).not.toMatch(/from "(\.\.\/)+(src|packages)\//);
      // Outside ui/src, only shared/.
      for (const [, , from] of imports) {
        const target = relative(root, join(root, dirname(path), from ?? ""));
        if (target.startsWith(".."))
          expect({ path, target }).toEqual({ path, target: expect.stringMatching(/^\.\.\/\.\.\/shared\//) });
      }
    }
    // What it takes from shared/ imports nothing itself, so nothing else comes along.
    const shared = new URL("../shared", import.meta.url).pathname;
    for (const name of readdirSync(shared)) {
      expect(readFileSync(join(shared, name), "utf8"), name).not.toMatch(/^\s*(import|export .* from)\b/m);
    }
  });

  it("call no REST path: only /trpc, and /token for the password grant", () => {
    const fetches = sources.flatMap(({ path, text }) =>
      [...text.matchAll(/fetch\(\s*("[^"]*"|`[^`]*`|\w+)/g)].map((m) => [path, m[1]]),
    );
    // The subscription's EventSource fetches the URL tRPC gives it (`url`); the password grant posts to /token.
    expect(fetches.sort()).toEqual([
      ["credentials.ts", '"/token"'],
      ["trpc.ts", "url"],
    ]);
    // Every other call goes through the tRPC client's links, at /trpc.
    const trpc = sources.find((source) => source.path === "trpc.ts")?.text ?? "";
    expect(trpc).toContain('trpcUrl = "/trpc"');
    expect([...trpc.matchAll(/url: (\w+)/g)].map((m) => m[1])).toEqual(["trpcUrl", "trpcUrl"]);
  });
});
