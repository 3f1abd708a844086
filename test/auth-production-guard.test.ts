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
    ...env,
  });

describe("NODE_ENV=production", () => {
  it("refuses to start without JWT_SECRET, saying why in one line", { timeout: 60_000 }, async () => {
    const done = await start({ NODE_ENV: "production", JWT_SECRET: "" });
    expect(done.code).toBe(1);
    expect(done.stderr).toBe("Invalid configuration: JWT_SECRET is required when NODE_ENV=production\n");
    expect(done.stdout).toBe("");
  });

  it("refuses a JWT_SECRET shorter than 32 bytes", { timeout: 60_000 }, async () => {
    const done = await start({ NODE_ENV: "production", JWT_SECRET: "x".repeat(31) });
    expect(done.code).toBe(1);
    expect(done.stderr).toBe("Invalid configuration: JWT_SECRET must be at least 32 bytes\n");
  });
});
