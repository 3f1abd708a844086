import { spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { createEmptyDatabase } from "./helpers/databases.js";
import { followStart } from "./helpers/spawn.js";

function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", SEED_SAMPLE_DATA: "false", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const { exited, port: listening, output } = followStart(child);
  listening.catch(() => {}); // awaited only by tests that expect the server to start
  return { child, exited, listening, output };
}

describe("configuration", () => {
  it.each([
    ["PORT", "eighty"],
    ["AUTH_POLICY", "some"],
    ["DATABASE_URL", "mysql://x"],
    ["DEFAULT_API_VERSION", "3"],
    ["SEED_SAMPLE_DATA", "maybe"],
    ["BODY_LIMIT", "lots"],
    ["API_V1_SUNSET", "next year"],
  ])("an invalid %s is one clear line naming it", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} [^\\n]+$`));
  });

  it("refuses to start in production without a strong JWT_SECRET", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrow(/^Invalid configuration: JWT_SECRET/);
    expect(() => loadConfig({ NODE_ENV: "production", JWT_SECRET: "short" })).toThrow(/JWT_SECRET must be at least 32/);
    const production = { NODE_ENV: "production", JWT_SECRET: "x".repeat(32), WEBHOOK_SECRETS_KEY: "w".repeat(32) };
    expect(loadConfig(production).jwtSecret).toBe("x".repeat(32));
  });

  it("the process stops with exit code 1 and that one line", async () => {
    const main = startMain({ PORT: "eighty" });
    expect(await main.exited).toBe(1);
    expect(main.output().stderr).toMatch(/^Invalid configuration: PORT [^\n]+\n$/);
  });
});

describe("the process", () => {
  let main: ReturnType<typeof startMain> | undefined;
  let empty: Awaited<ReturnType<typeof createEmptyDatabase>>;
  beforeAll(async () => {
    empty = await createEmptyDatabase();
  });
  afterAll(async () => {
    main?.child.kill("SIGKILL");
    await main?.exited;
    await empty.drop();
  });

  it("migrates an empty database, serves, and on SIGTERM finishes in-flight requests and exits 0", async () => {
    const started = startMain({ DATABASE_URL: empty.url });
    main = started;
    const port = await started.listening;
    expect((await fetch(`http://127.0.0.1:${port}/agents`)).status).toBe(200);

    // A request in flight when the signal arrives still gets its answer.
    const inFlight = new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        { host: "127.0.0.1", port, method: "POST", path: "/agents", headers: { "content-type": "application/json" } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.write('{"name":"late",');
      setTimeout(() => {
        started.child.kill("SIGTERM");
        setTimeout(() => req.end('"type":"worker"}'), 200);
      }, 100);
    });
    expect(await inFlight).toBe(201);
    expect(await started.exited).toBe(0);
    expect(started.output().stdout).toContain('"msg":"stopped"');
  }, 90_000); // migrating PostgreSQL through Prisma's CLI takes seconds
});
