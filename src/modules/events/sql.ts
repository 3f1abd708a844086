import { type Queryable, statement } from "../../db/index.js";
import { ordinalsPerTransaction } from "./outbox.js";
import type { EventRecord, EventType } from "./types.js";

const columns = "id, type, occurred_at, agent_id, task_id, data";

/**
 * PostgreSQL: only events below the oldest transaction of this database still
 * running, in the same statement. Every transaction with a smaller id has
 * ended, so an event that becomes visible later has a larger id than any
 * returned now (docs/api/events.md). The snapshot's xmin would do, but it counts the
 * transactions of every database in the cluster: a long one elsewhere (a
 * CREATE DATABASE, a migration, a report) would hold every reader back. So a
 * running transaction is skipped only when pg_stat_activity shows it belongs
 * to another database; one it cannot place still counts, which is safe.
 * SQLite needs no horizon: its writers are serialised.
 */
export const horizon = `(SELECT COALESCE(
    (SELECT MIN(running::text::bigint) FROM pg_snapshot_xip(pg_current_snapshot()) AS running
      WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity AS other
        WHERE other.datname IS NOT NULL AND other.datname <> current_database()
          AND other.backend_xid::text::bigint = running::text::bigint % 4294967296)),
    pg_snapshot_xmax(pg_current_snapshot())::text::bigint) * ${ordinalsPerTransaction})`;

const page = <Args extends [bigint, number, ...string[]]>(name: string, sqlite: string, postgresql: string) =>
  statement<EventRecord, Args>(name, {
    sqlite: `SELECT ${columns} FROM events WHERE id > $1${sqlite} ORDER BY id LIMIT $2`,
    postgresql: `SELECT ${columns} FROM events WHERE id > $1 AND id < ${horizon}${postgresql} ORDER BY id LIMIT $2`,
  });

// Types are passed as a JSON array, the one list both databases take as a parameter.
const sqliteTypes = (n: number) => ` AND type IN (SELECT value FROM json_each($${n}))`;
const postgresTypes = (n: number) => ` AND type IN (SELECT json_array_elements_text($${n}::json))`;

const pages = {
  all: page<[bigint, number]>("events_page", "", ""),
  agent: page<[bigint, number, string]>("events_page_agent", " AND agent_id = $3", " AND agent_id = $3"),
  types: page<[bigint, number, string]>("events_page_types", sqliteTypes(3), postgresTypes(3)),
  agentTypes: page<[bigint, number, string, string]>(
    "events_page_agent_types",
    ` AND agent_id = $3${sqliteTypes(4)}`,
    ` AND agent_id = $3${postgresTypes(4)}`,
  ),
};

export interface EventFilter {
  /** Only events after this id (default: from the oldest kept). */
  after?: bigint;
  limit?: number;
  agentId?: string;
  /** Exact types; an empty list matches nothing. */
  types?: readonly EventType[];
}

/** Events in id order, as far as readers may see them without ever seeing a smaller id later. */
export async function readEvents(
  db: Queryable,
  { after = 0n, limit = 100, agentId, types }: EventFilter = {},
): Promise<EventRecord[]> {
  if (types?.length === 0) return [];
  const typeList = types && JSON.stringify(types);
  if (agentId !== undefined && typeList !== undefined) {
    return db.all(pages.agentTypes, [after, limit, agentId, typeList]);
  }
  if (agentId !== undefined) return db.all(pages.agent, [after, limit, agentId]);
  if (typeList !== undefined) return db.all(pages.types, [after, limit, typeList]);
  return db.all(pages.all, [after, limit]);
}

export const eventStatements = {
  exists: statement<{ id: bigint }, [id: bigint]>("events_exists", "SELECT id FROM events WHERE id = $1"),
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
