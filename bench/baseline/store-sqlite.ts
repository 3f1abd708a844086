import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { defaultProjectId } from "../../src/resources/acting.js";
import type { Agent, AgentStore } from "./store.js";

interface Row {
  id: string;
  name: string;
  type: string;
  status: string;
  created_at: string;
  updated_at: string;
  version: number;
  metadata: string;
  max_running: number | null;
  max_running_per_key: number | null;
}

// Prisma stores a DateTime on SQLite as `2026-11-25T22:39:57.123+00:00`
// (fixed width, so text order is time order); the contract writes `…Z`.
const toIso = (stored: string) => `${stored.slice(0, 23)}Z`;
const toStored = (date: Date) => `${date.toISOString().slice(0, 23)}+00:00`;
const toAgent = (row: Row): Agent => ({
  id: row.id,
  name: row.name,
  type: row.type,
  status: row.status,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at),
  version: row.version,
  metadata: JSON.parse(row.metadata),
  concurrency: { max_running: row.max_running, max_running_per_key: row.max_running_per_key },
});

// Every agent is the default project's; the lists name it, as the service's do, so both walk the same indexes.
const defaultProject = `'${defaultProjectId}'`;
const columns = "id, name, type, status, created_at, updated_at, version, metadata, max_running, max_running_per_key";

/** Applies the project's own SQLite migrations when the file has no schema yet. */
function migrate(db: Database.Database, migrationsDir: string) {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agents'").get();
  if (exists) return;
  for (const dir of readdirSync(migrationsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .sort()) {
    db.exec(readFileSync(join(migrationsDir, dir.name, "migration.sql"), "utf8"));
  }
}

export function sqliteStore(path: string, migrationsDir: string): AgentStore {
  const db = new Database(path, { timeout: 5000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  migrate(db, migrationsDir);

  const list = db.prepare<[number, number], Row>(
    `SELECT ${columns} FROM agents WHERE project_id = ${defaultProject} ORDER BY created_at, id LIMIT ? OFFSET ?`,
  );
  const listByStatus = db.prepare<[string, number, number], Row>(
    `SELECT ${columns} FROM agents WHERE project_id = ${defaultProject} AND status = ? ORDER BY created_at, id LIMIT ? OFFSET ?`,
  );
  const get = db.prepare<[string], Row>(`SELECT ${columns} FROM agents WHERE id = ?`);
  const insert = db.prepare(
    `INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at) VALUES (?, ${defaultProject}, ?, ?, ?, ?, ?)`,
  );
  const update = db.prepare<[string | null, string | null, string | null, string, string], Row>(
    `UPDATE agents SET name = coalesce(?, name), type = coalesce(?, type), status = coalesce(?, status), updated_at = ?,
     version = version + 1 WHERE id = ? RETURNING ${columns}`,
  );
  const remove = db.prepare("DELETE FROM agents WHERE id = ?");

  return {
    list: async ({ skip, limit, status }) =>
      (status ? listByStatus.all(status, limit, skip) : list.all(limit, skip)).map(toAgent),
    get: async (id) => {
      const row = get.get(id);
      return row && toAgent(row);
    },
    create: async (name, type) => {
      const now = toStored(new Date());
      const row = {
        id: randomUUID(),
        name,
        type,
        status: "idle",
        created_at: now,
        updated_at: now,
        version: 1,
        metadata: "{}",
        max_running: null,
        max_running_per_key: null,
      };
      insert.run(row.id, name, type, row.status, now, now);
      return toAgent(row);
    },
    update: async (id, fields) => {
      const row = update.get(fields.name ?? null, fields.type ?? null, fields.status ?? null, toStored(new Date()), id);
      return row && toAgent(row);
    },
    remove: async (id) => remove.run(id).changes > 0,
    close: async () => {
      db.close();
    },
  };
}
