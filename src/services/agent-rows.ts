import { statement } from "../db/index.js";
import type { AgentOut } from "../schemas/agents.js";

/** An agents row as the statements below return it: only these columns ever leave the database. */
export interface AgentRow {
  id: string;
  name: string;
  type: string;
  status: string;
  created_at: string;
  updated_at: string;
  version: number;
  metadata: string;
}

export const agentColumns = "id, name, type, status, created_at, updated_at, version, metadata";

/** The Agent response, and the `agent` of its events. */
export const toAgent = (row: AgentRow): AgentOut => ({
  id: row.id,
  name: row.name,
  type: row.type as AgentOut["type"],
  status: row.status as AgentOut["status"],
  created_at: row.created_at,
  updated_at: row.updated_at,
  version: row.version,
  metadata: JSON.parse(row.metadata),
});

/** The agents' statements, shared with the benchmark's query plans. */
export const agentStatements = {
  get: statement<AgentRow, [id: string]>("agents_get", `SELECT ${agentColumns} FROM agents WHERE id = $1`),
  // Ordered by (created_at, id): served by agents_created_at_id_idx, or with a
  // status by agents_status_created_at_id_idx (the plans are in bench/README.md).
  page: statement<AgentRow, [limit: number, skip: number]>(
    "agents_page",
    `SELECT ${agentColumns} FROM agents ORDER BY created_at, id LIMIT $1 OFFSET $2`,
  ),
  pageByStatus: statement<AgentRow, [status: string, limit: number, skip: number]>(
    "agents_page_by_status",
    `SELECT ${agentColumns} FROM agents WHERE status = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`,
  ),
  insert: statement<AgentRow, [id: string, name: string, type: string, now: Date]>(
    "agents_insert",
    `INSERT INTO agents (id, name, type, status, created_at, updated_at, version, metadata)
     VALUES ($1, $2, $3, 'idle', $4, $4, 1, '{}') RETURNING ${agentColumns}`,
  ),
  /** Writes only if the row still has the version it was read with. */
  update: statement<
    AgentRow,
    [name: string, type: string, status: string, updatedAt: Date, id: string, version: number]
  >(
    "agents_update",
    `UPDATE agents SET name = $1, type = $2, status = $3, updated_at = $4, version = version + 1
     WHERE id = $5 AND version = $6 RETURNING ${agentColumns}`,
  ),
  /**
   * The agent, locked on PostgreSQL until the transaction ends: a task
   * creation (which takes a share lock on its agent) waits, then finds the
   * agent gone, so no task escapes a deletion's events.
   */
  lock: statement<{ id: string; version: number }, [id: string]>("agents_lock", {
    sqlite: "SELECT id, version FROM agents WHERE id = $1",
    postgresql: "SELECT id, version FROM agents WHERE id = $1 FOR UPDATE",
  }),
  exists: statement<{ id: string }, [id: string]>("agents_exists", "SELECT id FROM agents WHERE id = $1"),
  delete: statement<AgentRow, [id: string]>(
    "agents_delete",
    `DELETE FROM agents WHERE id = $1 RETURNING ${agentColumns}`,
  ),
  /** A conditional deletion (If-Match): only the version the request accepted. */
  deleteAtVersion: statement<AgentRow, [id: string, version: number]>(
    "agents_delete_at_version",
    `DELETE FROM agents WHERE id = $1 AND version = $2 RETURNING ${agentColumns}`,
  ),
};
