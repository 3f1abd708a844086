import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
// @ts-expect-error: a plain ESM script without type declarations
import { schemaFor } from "../scripts/prisma-schemas.mjs";
import { createTestDatabase, postgresAdminUrl, type TestDatabase, testProvider } from "./helpers/databases.js";
import { postgresShape, sqliteShape } from "./helpers/introspect.js";

const run = promisify(execFile);
const providers = ["sqlite", "postgresql"] as const;
const migrationsOf = (provider: string) =>
  readdirSync(`prisma/${provider}/migrations`, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

describe("one model definition feeds both providers", () => {
  it("each provider's schema is generated from prisma/models.prisma", () => {
    const models = readFileSync("prisma/models.prisma", "utf8");
    for (const provider of providers) {
      expect(readFileSync(`prisma/${provider}/schema.prisma`, "utf8")).toBe(schemaFor(provider, models));
    }
  });

  it("both providers have the same migrations, in the same order", () => {
    expect(migrationsOf("sqlite").length).toBeGreaterThan(0);
    expect(migrationsOf("postgresql")).toEqual(migrationsOf("sqlite"));
  });
});

/** The SQL that creates the models' schema from nothing, as Prisma writes it. */
async function schemaFromModels(databaseUrl: string) {
  const { stdout } = await run(
    process.execPath,
    [
      "node_modules/prisma/build/index.js",
      "migrate",
      "diff",
      "--from-empty",
      "--to-schema-datamodel",
      `prisma/${testProvider}/schema.prisma`,
      "--script",
    ],
    { env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
  return stdout;
}

describe(`the ${testProvider} migrations`, () => {
  let migrated: TestDatabase;
  beforeAll(async () => {
    migrated = await createTestDatabase(inject("templateDatabase"));
  });
  afterAll(() => migrated.drop());

  it("build exactly the schema the models describe", async () => {
    if (testProvider === "sqlite") {
      const dir = mkdtempSync(join(tmpdir(), "agents-models-"));
      try {
        const file = join(dir, "models.db");
        const fresh = new Database(file);
        fresh.exec(await schemaFromModels(`file:${file}`));
        fresh.close();
        expect(sqliteShape(migrated.url.replace(/^file:/, ""))).toEqual(sqliteShape(file));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      return;
    }
    const name = `agents_models_${randomBytes(4).toString("hex")}`;
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${name}`;
    try {
      const fresh = new pg.Client({ connectionString: url.toString() });
      await fresh.connect();
      await fresh.query(await schemaFromModels(url.toString()));
      await fresh.end();
      expect(await postgresShape(migrated.url)).toEqual(await postgresShape(url.toString()));
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it("let the rate limiter's cleanup find expired counts through an index, not by reading the whole table", async () => {
    // rate-limiter-flexible's own statement, run every few minutes by every process.
    const cleanup = "DELETE FROM rate_limits WHERE expire < 1";
    if (testProvider === "sqlite") {
      const db = new Database(migrated.url.replace(/^file:/, ""), { readonly: true });
      try {
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${cleanup}`).all() as { detail: string }[];
        expect(plan.map((step) => step.detail)).toEqual([
          "SEARCH rate_limits USING INDEX rate_limits_expire_idx (expire<?)",
        ]);
      } finally {
        db.close();
      }
      return;
    }
    const client = new pg.Client({ connectionString: migrated.url });
    await client.connect();
    try {
      // The table is empty here, where reading it whole is cheapest: only whether an index serves the query is asked.
      await client.query("SET enable_seqscan = off");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${cleanup}`);
      const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
      expect(plan).toMatch(/ on rate_limits_expire_idx .*\n.*Index Cond: \(expire < 1\)/);
    } finally {
      await client.end();
    }
  });
});
