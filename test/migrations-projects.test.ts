import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { connectDatabase, type Database as Db, sqlitePath } from "../src/db/index.js";
import { migrateDatabase } from "../src/db/migrations.js";
import { hashPassword } from "../src/modules/auth/passwords.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { capturingLogger, requestTo, testConfig } from "./helpers/app.js";
import { createEmptyDatabase, testProvider } from "./helpers/databases.js";

// A database made before projects existed: its rows land in the default
// project, its users become that project's admins, and everything answers as before.
const run = promisify(execFile);
const migration = "20261128120000_projects";
const folder = `prisma/${testProvider}/migrations`;
const before = readdirSync(folder, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name < migration)
  .map((entry) => entry.name);

async function migrateToPrevious(url: string) {
  const dir = mkdtempSync(join(tmpdir(), "agents-before-projects-"));
  try {
    mkdirSync(join(dir, "migrations"));
    cpSync(`${folder}/migration_lock.toml`, join(dir, "migrations", "migration_lock.toml"));
    for (const name of before) cpSync(`${folder}/${name}`, join(dir, "migrations", name), { recursive: true });
    cpSync(`prisma/${testProvider}/schema.prisma`, join(dir, "schema.prisma"));
    if (testProvider === "sqlite") mkdirSync(dirname(sqlitePath(url)), { recursive: true });
    await run(
      process.execPath,
      ["node_modules/prisma/build/index.js", "migrate", "deploy", "--schema", join(dir, "schema.prisma")],
      { env: { ...process.env, DATABASE_URL: url } },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const agentId = "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69";
const taskId = "9d0f3b6e-2c4a-4e8f-b1d7-5a6c7e8f9012";
const webhookId = "0b6f7c8d-1e2f-4a3b-9c4d-5e6f7a8b9c0d";
const userId = "1f2d3c4b-5a69-4b1c-8e0a-8f3d4c2b9a6e";
const email = "old.user@example.com";
const password = "an old but long password";
const createdAt = "2025-01-02T03:04:05.678Z";

/** Rows as the schema before projects held them. */
async function insertOldRows(url: string) {
  const passwordHash = await hashPassword(password);
  const statements: [string, unknown[]][] = [
    [
      `INSERT INTO agents (id, name, type, status, created_at, updated_at, version, metadata)
       VALUES ($1, 'old', 'worker', 'running', $2, $2, 1, '{"team":"red"}')`,
      [agentId, createdAt],
    ],
    [
      "INSERT INTO agent_metadata (agent_id, key, value, created_at) VALUES ($1, 'team', 'red', $2)",
      [agentId, createdAt],
    ],
    [
      `INSERT INTO tasks (id, agent_id, title, priority, status, input, created_at, updated_at, run_at)
       VALUES ($1, $2, 'old task', 3, 'pending', '{"a":1}', $3, $3, $3)`,
      [taskId, agentId, createdAt],
    ],
    [
      `INSERT INTO webhooks (id, url, types, description, enabled, created_at, updated_at)
       VALUES ($1, 'https://example.com/hook', '["task.*"]', 'old hook', $2, $3, $3)`,
      [webhookId, testProvider === "sqlite" ? 1 : true, createdAt],
    ],
    [
      "INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)",
      [userId, email, passwordHash, createdAt],
    ],
  ];
  if (testProvider === "sqlite") {
    const db = new Database(sqlitePath(url));
    const sqlite = (value: unknown) => (value === createdAt ? createdAt.replace("Z", "+00:00") : value);
    for (const [sql, values] of statements) {
      const order = [...sql.matchAll(/\$(\d)/g)].map((match) => values[Number(match[1]) - 1]);
      db.prepare(sql.replace(/\$\d/g, "?")).run(...order.map(sqlite));
    }
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const [sql, values] of statements) await client.query(sql, values);
  await client.end();
}

describe(`the ${testProvider} migration ${migration} on a database made before it`, () => {
  let database: Awaited<ReturnType<typeof createEmptyDatabase>>;
  let db: Db;
  let server: Server;
  let request: ReturnType<typeof requestTo>;
  beforeAll(async () => {
    database = await createEmptyDatabase();
    await migrateToPrevious(database.url);
    await insertOldRows(database.url);
    await migrateDatabase(database.url);
    db = await connectDatabase(database.url);
    const config = testConfig({ AUTH_POLICY: "open", API_KEYS: "configured-key" }, { ...database, db } as never);
    const shutdown = new AbortController();
    server = createServer(createApp({ db, config, logger: capturingLogger().logger, shutdown: shutdown.signal }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    request = requestTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }, 120_000);
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await db.close();
    await database.drop();
  });

  it("puts every row in the default project, where it answers as before", async () => {
    for (const headers of [{}, { "x-api-key": "configured-key" }] as Record<string, string>[]) {
      const agents = await request("/agents?metadata[team]=red", { headers });
      expect(agents.status).toBe(200);
      expect(await agents.json()).toEqual([
        expect.objectContaining({ id: agentId, name: "old", status: "running", metadata: { team: "red" } }),
      ]);
      const task = await request(`/agents/${agentId}/tasks/${taskId}`, { headers });
      expect(await task.json()).toMatchObject({ id: taskId, title: "old task", input: { a: 1 }, status: "pending" });
      const hooks = await request("/webhooks", { headers });
      expect(await hooks.json()).toEqual([expect.objectContaining({ id: webhookId, description: "old hook" })]);
    }
    const rows = await db.prisma.$queryRawUnsafe<{ project_id: string }[]>(
      "SELECT project_id FROM agents UNION ALL SELECT project_id FROM agent_metadata UNION ALL SELECT project_id FROM tasks UNION ALL SELECT project_id FROM webhooks",
    );
    expect(rows.map((row) => row.project_id)).toEqual([
      defaultProjectId,
      defaultProjectId,
      defaultProjectId,
      defaultProjectId,
    ]);
  });

  it("makes the users of before admins of the default project, and takes writes in it", async () => {
    const token = await request("/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ username: email, password }).toString(),
    });
    expect(token.status).toBe(200);
    const headers = { authorization: `Bearer ${((await token.json()) as { access_token: string }).access_token}` };
    const projects = await request("/projects", { headers });
    expect(await projects.json()).toEqual([
      expect.objectContaining({ id: defaultProjectId, name: "default", role: "admin" }),
    ]);
    const lease = await request(`/agents/${agentId}/leases`, { method: "POST", headers, json: { worker: "w" } });
    expect(lease.status).toBe(201);
    expect(((await lease.json()) as { task: { id: string } }).task.id).toBe(taskId);
    const renamed = await request(`/agents/${agentId}`, { method: "PATCH", headers, json: { name: "renamed" } });
    expect(renamed.status).toBe(200);
    const events = await request(`/events?agent_id=${agentId}`, { headers });
    expect(((await events.json()) as { type: string }[]).map((event) => event.type)).toEqual([
      "task.leased",
      "agent.updated",
    ]);
    // Another project sees none of it.
    const other = await request("/projects", { method: "POST", headers, json: { name: "new" } });
    const { id } = (await other.json()) as { id: string };
    expect((await request(`/agents/${agentId}`, { headers: { ...headers, "x-project-id": id } })).status).toBe(404);
  });
});
