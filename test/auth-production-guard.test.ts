import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./helpers/databases.js";
import { run } from "./helpers/spawn.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase(inject("templateDatabase"));
});
afterAll(() => database.drop());

const start = (env: Record<string, string>) =>
  run("npx", ["tsx", "src/main.ts"], {
    ...process.env,
    DATABASE_URL: database.url,
    PORT: "0",
    SEED_SAMPLE_DATA: "false",
    // An npm setting npm does not know makes it print a warning on stderr, as
    // some machines' npm configuration does: the service's line must not care.
    npm_config_agents_unknown_setting: "1",
    ...env,
  });

/** The service's own lines; npx, which started it, may print its own around them. */
const serviceLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("Invalid configuration"));

describe("NODE_ENV=production", () => {
  it("refuses to start without JWT_SECRET, saying why in one line", { timeout: 60_000 }, async () => {
    const done = await start({ NODE_ENV: "production", JWT_SECRET: "" });
    expect(done.code).toBe(1);
    expect(serviceLines(done.stderr)).toEqual([
      "Invalid configuration: JWT_SECRET is required when NODE_ENV=production",
    ]);
    expect(done.stderr).not.toMatch(/^\s+at /m);
    expect(done.stdout).toBe("");
  });

  it("refuses a JWT_SECRET shorter than 32 bytes", { timeout: 60_000 }, async () => {
    const done = await start({ NODE_ENV: "production", JWT_SECRET: "x".repeat(31) });
    expect(done.code).toBe(1);
    expect(serviceLines(done.stderr)).toEqual(["Invalid configuration: JWT_SECRET must be at least 32 bytes"]);
    expect(done.stderr).not.toMatch(/^\s+at /m);
  });
});
