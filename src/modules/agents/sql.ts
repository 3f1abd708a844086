import { statement } from "../../db/index.js";
import { postgresOrderedId } from "../../db/log-order.js";
import { insertKept, type KeptColumns } from "../../idempotency/sql.js";
import type { ListSource } from "../../resources/list-sql.js";
import { eventsChannel } from "../events/outbox.js";
import type { AgentOut } from "./schemas.js";

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
  max_running: number | null;
  max_running_per_key: number | null;
}

export const agentColumns =
  "id, name, type, status, created_at, updated_at, version, metadata, max_running, max_running_per_key";

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
  concurrency: { max_running: row.max_running, max_running_per_key: row.max_running_per_key },
});

type CreateColumns = [
  id: string,
  name: string,
  type: string,
  now: Date,
  metadata: string,
  data: string,
  projectId: string,
];
type Limits = [maxRunning: number | null, maxRunningPerKey: number | null];

/** createAlone's text; `kept` adds the key's row (insertKept from `$8`), on which the agent's insert depends. */
function createAloneSql(kept: boolean) {
  // The limits follow the key's columns when there are some ($8–$15).
  const [max, perKey] = kept ? ["$16", "$17"] : ["$8", "$9"];
  const values = `$1, $7, $2, $3, 'idle', $4, $4, 1, $5, ${max}::integer, ${perKey}::integer`;
  return `WITH ${kept ? `kept AS (${insertKept(8)} RETURNING 1),` : ""}
    agent AS (
      INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at, version, metadata,
        max_running, max_running_per_key)
      ${kept ? `SELECT ${values} FROM kept` : `VALUES (${values})`} RETURNING ${agentColumns}),
    pairs AS (
      INSERT INTO agent_metadata (agent_id, project_id, key, value, created_at)
      SELECT agent.id, $7, pair.key, pair.value, $4 FROM agent, jsonb_each_text($5::jsonb) AS pair),
    event AS (
      INSERT INTO events (id, project_id, type, occurred_at, agent_id, task_id, data)
      SELECT ${postgresOrderedId("1")}, $7, 'agent.created', $4, agent.id, NULL, $6 FROM agent
      RETURNING agent_id)
    SELECT agent.*, pg_notify('${eventsChannel}', event.agent_id) AS notified FROM agent, event`;
}

/** The agents' statements, shared with the benchmark's query plans. */
export const agentStatements = {
  /** The metrics' count: an index-only scan of the index that leads with status (agents: status, created_at, id). */
  countByStatus: statement<{ status: string; count: number | bigint }>(
    "agents_count_by_status",
    "SELECT status, COUNT(*) AS count FROM agents GROUP BY status",
  ),
  get: statement<AgentRow, [id: string, projectId: string]>(
    "agents_get",
    `SELECT ${agentColumns} FROM agents WHERE id = $1 AND project_id = $2`,
  ),
  insert: statement<
    AgentRow,
    [id: string, name: string, type: string, now: Date, metadata: string, projectId: string, ...Limits]
  >(
    "agents_insert",
    `INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at, version, metadata,
       max_running, max_running_per_key)
     VALUES ($1, $6, $2, $3, 'idle', $4, $4, 1, $5, $7, $8) RETURNING ${agentColumns}`,
  ),
  /** Writes only if the row still has the version it was read with. */
  update: statement<
    AgentRow,
    [
      name: string,
      type: string,
      status: string,
      updatedAt: Date,
      id: string,
      version: number,
      metadata: string,
      projectId: string,
      ...Limits,
    ]
  >(
    "agents_update",
    `UPDATE agents SET name = $1, type = $2, status = $3, updated_at = $4, version = version + 1, metadata = $7,
       max_running = $9, max_running_per_key = $10
     WHERE id = $5 AND version = $6 AND project_id = $8 RETURNING ${agentColumns}`,
  ),
  /**
   * PostgreSQL: a creation as one statement, which commits by itself: the
   * agent, its metadata pairs, its agent.created event (`$6` its data, the
   * first event of its transaction) and the notification PostgreSQL sends at
   * commit. One round trip, where a transaction takes four or five (BEGIN,
   * the agent, its pairs if it has metadata, its event, COMMIT).
   */
  createAlone: statement<AgentRow, [...CreateColumns, ...Limits]>("agents_create_alone", {
    postgresql: createAloneSql(false),
  }),
  /**
   * The same, with the response kept for its Idempotency-Key (`$8`–`$15`,
   * src/idempotency/kept-answer.ts): the agent is written only if the key
   * is, so a key held by another request gives no row and creates nothing.
   */
  createAloneKept: statement<AgentRow, [...CreateColumns, ...KeptColumns, ...Limits]>("agents_create_alone_kept", {
    postgresql: createAloneSql(true),
  }),
  /** The pairs of a metadata JSON text, one row each, for filtered lists (project and created_at copied from the agent). */
  insertPairs: statement<unknown, [agentId: string, createdAt: Date, metadata: string]>("agent_metadata_insert", {
    sqlite: `INSERT INTO agent_metadata (agent_id, project_id, key, value, created_at)
      SELECT a.id, a.project_id, j.key, j.value, $2 FROM agents a, json_each($3) j WHERE a.id = $1`,
    postgresql: `INSERT INTO agent_metadata (agent_id, project_id, key, value, created_at)
      SELECT a.id, a.project_id, j.key, j.value, $2 FROM agents a, jsonb_each_text($3::jsonb) j WHERE a.id = $1`,
  }),
  deletePairs: statement<unknown, [agentId: string]>(
    "agent_metadata_delete",
    "DELETE FROM agent_metadata WHERE agent_id = $1",
  ),
  /**
   * The agent, locked on PostgreSQL until the transaction ends: a task
   * creation (which takes a share lock on its agent) waits, then finds the
   * agent gone, so no task escapes a deletion's events.
   */
  lock: statement<{ id: string; version: number }, [id: string, projectId: string]>("agents_lock", {
    sqlite: "SELECT id, version FROM agents WHERE id = $1 AND project_id = $2",
    postgresql: "SELECT id, version FROM agents WHERE id = $1 AND project_id = $2 FOR UPDATE",
  }),
  delete: statement<AgentRow, [id: string, projectId: string]>(
    "agents_delete",
    `DELETE FROM agents WHERE id = $1 AND project_id = $2 RETURNING ${agentColumns}`,
  ),
  /** A conditional deletion (If-Match): only the version the request accepted. */
  deleteAtVersion: statement<AgentRow, [id: string, version: number, projectId: string]>(
    "agents_delete_at_version",
    `DELETE FROM agents WHERE id = $1 AND version = $2 AND project_id = $3 RETURNING ${agentColumns}`,
  ),
};

/** GET /agents (docs/http.md): the plans of every shape are in bench/README.md. */
export const agentList: ListSource = {
  name: "agents",
  table: "agents",
  columns: agentColumns,
  indexes: { all: "agents_project_id_created_at_id_idx", byStatus: "agents_project_id_status_created_at_id_idx" },
  pairs: {
    table: "agent_metadata",
    id: "agent_id",
    index: "agent_metadata_project_id_key_value_created_at_agent_id_idx",
  },
  scope: "project_id",
};
