import { type Queryable, statement } from "../../db/index.js";
import { readHorizon as horizon } from "../../db/log-order.js";
import type { EventRecord, EventType } from "./types.js";

const columns = "id, project_id, type, occurred_at, agent_id, task_id, data";

// A project's pages walk events_project_id_id_idx (with types, events_project_id_type_id_idx; with an agent,
// events_agent_id_id_idx, its project checked on each row); the feeder's, every project's, the primary key.
const page = <Args extends [bigint, number, ...string[]]>(name: string, sqlite: string, postgresql: string) =>
  statement<EventRecord, Args>(name, {
    sqlite: `SELECT ${columns} FROM events WHERE id > $1${sqlite} ORDER BY id LIMIT $2`,
    postgresql: `SELECT ${columns} FROM events WHERE id > $1 AND id < ${horizon}${postgresql} ORDER BY id LIMIT $2`,
  });

// Types are passed as a JSON array, the one list both databases take as a parameter.
const sqliteTypes = (n: number) => ` AND type IN (SELECT value FROM json_each($${n}))`;
const postgresTypes = (n: number) => ` AND type IN (SELECT json_array_elements_text($${n}::json))`;

const pages = {
  everyProject: page<[bigint, number]>("events_page_every_project", "", ""),
  all: page<[bigint, number, string]>("events_page", " AND project_id = $3", " AND project_id = $3"),
  agent: page<[bigint, number, string, string]>(
    "events_page_agent",
    " AND project_id = $3 AND agent_id = $4",
    " AND project_id = $3 AND agent_id = $4",
  ),
  types: page<[bigint, number, string, string]>(
    "events_page_types",
    ` AND project_id = $3${sqliteTypes(4)}`,
    ` AND project_id = $3${postgresTypes(4)}`,
  ),
  agentTypes: page<[bigint, number, string, string, string]>(
    "events_page_agent_types",
    ` AND project_id = $3 AND agent_id = $4${sqliteTypes(5)}`,
    ` AND project_id = $3 AND agent_id = $4${postgresTypes(5)}`,
  ),
};

export interface EventFilter {
  /** Only this project's events. */
  projectId: string;
  /** Only events after this id (default: from the oldest kept). */
  after?: bigint;
  limit?: number;
  agentId?: string;
  /** Exact types; an empty list matches nothing. */
  types?: readonly EventType[];
}

/** A project's events in id order, as far as readers may see them without ever seeing a smaller id later. */
export async function readEvents(
  db: Queryable,
  { projectId, after = 0n, limit = 100, agentId, types }: EventFilter,
): Promise<EventRecord[]> {
  if (types?.length === 0) return [];
  const typeList = types && JSON.stringify(types);
  if (agentId !== undefined && typeList !== undefined) {
    return db.all(pages.agentTypes, [after, limit, projectId, agentId, typeList]);
  }
  if (agentId !== undefined) return db.all(pages.agent, [after, limit, projectId, agentId]);
  if (typeList !== undefined) return db.all(pages.types, [after, limit, projectId, typeList]);
  return db.all(pages.all, [after, limit, projectId]);
}

/** Every project's events in id order: for the log's own readers (streams' hub, webhook feeding), never a client. */
export function readEveryProject(db: Queryable, after: bigint, limit: number): Promise<EventRecord[]> {
  return db.all(pages.everyProject, [after, limit]);
}

export const eventStatements = {
  exists: statement<{ id: bigint }, [id: bigint, projectId: string]>(
    "events_exists",
    "SELECT id FROM events WHERE id = $1 AND project_id = $2",
  ),
};

const head = statement<{ head: bigint | number }>("events_head", {
  sqlite: "SELECT COALESCE(MAX(id), 0) AS head FROM events",
  postgresql: `SELECT ${horizon} - 1 AS head`,
});

/**
 * A position to read from for "new events only": a reader that starts after
 * it misses no event committed after this call (and may see a few committed
 * just before it, on PostgreSQL).
 */
export async function eventLogHead(db: Queryable): Promise<bigint> {
  const row = await db.get(head, []);
  return BigInt(row?.head ?? 0);
}
