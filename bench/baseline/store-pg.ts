import { randomUUID } from "node:crypto";
import pg from "pg";
import { defaultProjectId } from "../../src/resources/acting.js";
import type { Agent, AgentStore } from "./store.js";

interface Row {
  id: string;
  name: string;
  type: string;
  status: string;
  created_at: Date;
  updated_at: Date;
  version: number;
  metadata: string;
  max_running: number | null;
  max_running_per_key: number | null;
}

const toAgent = (row: Row): Agent => ({
  id: row.id,
  name: row.name,
  type: row.type,
  status: row.status,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  version: row.version,
  metadata: JSON.parse(row.metadata),
  concurrency: { max_running: row.max_running, max_running_per_key: row.max_running_per_key },
});

// Every agent is the default project's; the lists name it, as the service's do, so both walk the same indexes.
const defaultProject = `'${defaultProjectId}'`;
const columns = "id, name, type, status, created_at, updated_at, version, metadata, max_running, max_running_per_key";

/**
 * PostgreSQL through a pool of named prepared statements. The schema is the
 * project's (Prisma migrations); Prisma's `timestamp(3)` columns hold UTC.
 */
export function pgStore(url: string, poolSize: number): AgentStore {
  // timestamp without time zone holds UTC here: parse it as UTC.
  const types = {
    getTypeParser: ((oid: number, format?: string) =>
      oid === 1114
        ? (value: string) => new Date(`${value.replace(" ", "T")}Z`)
        : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types });
  const query = async (name: string, text: string, values: unknown[]) =>
    (await pool.query<Row>({ name, text, values })).rows;

  return {
    list: async ({ skip, limit, status }) =>
      (status
        ? await query(
            "list_status",
            `SELECT ${columns} FROM agents WHERE project_id = ${defaultProject} AND status = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`,
            [status, limit, skip],
          )
        : await query(
            "list",
            `SELECT ${columns} FROM agents WHERE project_id = ${defaultProject} ORDER BY created_at, id LIMIT $1 OFFSET $2`,
            [limit, skip],
          )
      ).map(toAgent),
    get: async (id) => {
      const [row] = await query("get", `SELECT ${columns} FROM agents WHERE id = $1`, [id]);
      return row && toAgent(row);
    },
    create: async (name, type) => {
      const now = new Date();
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
      await query(
        "insert",
        `INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at) VALUES ($1, ${defaultProject}, $2, $3, $4, $5, $5)`,
        [row.id, name, type, row.status, now.toISOString().replace("Z", "")],
      );
      return toAgent(row);
    },
    update: async (id, fields) => {
      const [row] = await query(
        "update",
        `UPDATE agents SET name = coalesce($1, name), type = coalesce($2, type), status = coalesce($3, status),
         updated_at = $4, version = version + 1 WHERE id = $5 RETURNING ${columns}`,
        [
          fields.name ?? null,
          fields.type ?? null,
          fields.status ?? null,
          new Date().toISOString().replace("Z", ""),
          id,
        ],
      );
      return row && toAgent(row);
    },
    remove: async (id) =>
      ((await pool.query({ name: "delete", text: "DELETE FROM agents WHERE id = $1", values: [id] })).rowCount ?? 0) >
      0,
    close: () => pool.end(),
  };
}
