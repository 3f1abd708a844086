import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDatabase, sqlitePath } from "../src/db/index.js";
import { migrateDatabase } from "../src/db/migrations.js";
import { agentsService } from "../src/modules/agents/service.js";
import { readEvents } from "../src/modules/events/sql.js";
import { tasksService } from "../src/modules/tasks/service.js";
import { defaultProjectId, systemActing } from "../src/resources/acting.js";
import { createEmptyDatabase, testProvider } from "./helpers/databases.js";

const run = promisify(execFile);
const migration = "20261126020000_leases_events_webhooks";
const folder = `prisma/${testProvider}/migrations`;
const before = readdirSync(folder, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name < migration)
  .map((entry) => entry.name);

/** Applies only the migrations older than `migration`, from a copy of the folder holding just those. */
async function migrateToPrevious(url: string) {
  const dir = mkdtempSync(join(tmpdir(), "agents-previous-"));
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
const taskIds = ["9d0f3b6e-2c4a-4e8f-b1d7-5a6c7e8f9012", "9d0f3b6e-2c4a-4e8f-b1d7-5a6c7e8f9013"];
const createdAt = ["2025-01-02T03:04:05.678Z", "2025-02-03T04:05:06.007Z"];
const updatedAt = "2025-03-04T05:06:07.890Z";

/** Rows as the previous schema had them, written the way Prisma wrote them then. */
async function insertOldRows(url: string) {
  const agents = `INSERT INTO agents (id, name, type, status, created_at, updated_at) VALUES ($1, 'old', 'worker', 'running', $2, $3)`;
  const tasks = `INSERT INTO tasks (id, agent_id, title, description, priority, status, input, result, created_at, updated_at)
    VALUES ($1, $2, $3, NULL, 7, $4, '{"b":1,"a":[2]}', $5, $6, $7)`;
  const taskValues = (i: number) => [
    taskIds[i],
    agentId,
    `task ${i}`,
    i === 0 ? "pending" : "succeeded",
    i === 0 ? null : '"done"',
    createdAt[i],
    updatedAt,
  ];
  if (testProvider === "sqlite") {
    const db = new Database(sqlitePath(url));
    const sqlite = (iso: unknown) => (typeof iso === "string" && iso.endsWith("Z") ? iso.replace("Z", "+00:00") : iso);
    db.prepare(agents.replace(/\$\d/g, "?")).run(agentId, sqlite(createdAt[0]), sqlite(updatedAt));
    for (const i of [0, 1]) db.prepare(tasks.replace(/\$\d/g, "?")).run(...taskValues(i).map(sqlite));
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(agents, [agentId, createdAt[0], updatedAt]);
  for (const i of [0, 1]) await client.query(tasks, taskValues(i));
  await client.end();
}

describe(`the ${testProvider} migration ${migration} on a database that holds agents and tasks`, () => {
  let database: Awaited<ReturnType<typeof createEmptyDatabase>>;
  beforeAll(async () => {
    database = await createEmptyDatabase();
    await migrateToPrevious(database.url);
    await insertOldRows(database.url);
    await migrateDatabase(database.url);
  });
  afterAll(() => database.drop());

  it("keeps every row and gives the new columns their values (run_at = created_at)", async () => {
    const db = await connectDatabase(database.url);
    try {
      expect(await agentsService.get(db, defaultProjectId, agentId)).toEqual({
        id: agentId,
        name: "old",
        type: "worker",
        status: "running",
        created_at: createdAt[0],
        updated_at: updatedAt,
        version: 1,
        metadata: {},
      });
      const { items: tasks } = await tasksService.list(db, defaultProjectId, {
        agent_id: agentId,
        skip: 0,
        limit: 10,
        order: "asc",
        include_total: false,
      });
      expect(tasks).toEqual(
        [0, 1].map((i) => ({
          id: taskIds[i],
          agent_id: agentId,
          title: `task ${i}`,
          description: null,
          priority: 7,
          status: i === 0 ? "pending" : "succeeded",
          input: { b: 1, a: [2] },
          result: i === 0 ? null : "done",
          created_at: createdAt[i],
          updated_at: updatedAt,
          max_attempts: 1,
          attempts: 0,
          run_at: createdAt[i],
          deadline_at: null,
          lease: null,
          cancel_requested: false,
          error: null,
          version: 1,
          metadata: {},
          schedule_id: null,
          scheduled_for: null,
        })),
      );
      expect(JSON.stringify(tasks[0]?.input)).toBe('{"b":1,"a":[2]}');
    } finally {
      await db.close();
    }
  });

  it("takes writes of the old rows afterwards, with their versions and events", async () => {
    const db = await connectDatabase(database.url);
    try {
      const task = await tasksService.update(db, defaultProjectId, agentId, taskIds[0] as string, {
        status: "running",
      });
      expect(task).toMatchObject({ status: "running", version: 2, run_at: createdAt[0] });
      await agentsService.remove(db, systemActing(defaultProjectId), agentId);
      const events = await readEvents(db, { projectId: defaultProjectId });
      expect(events.map((event) => [event.type, event.task_id])).toEqual([
        ["task.updated", taskIds[0]],
        ["task.deleted", taskIds[0]],
        ["task.deleted", taskIds[1]],
        ["agent.deleted", null],
      ]);
    } finally {
      await db.close();
    }
  });
});
