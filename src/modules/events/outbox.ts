import { statement, type Tx } from "../../db/index.js";
import { ordinalsPerTransaction, postgresOrderedId } from "../../db/log-order.js";
import type { EventData, EventType } from "./types.js";

/** A change to record: what happened to which agent (and task), with the resource's data. */
export interface NewEvent {
  type: EventType;
  agentId: string;
  taskId?: string | null;
  data: EventData;
}

/**
 * The channel every commit that records events notifies, once per agent
 * (payload: the agent's id). Readers of the log (streams, webhook delivery)
 * listen to it to know when to read again; the events themselves always
 * come from the table.
 */
export const eventsChannel = "events";

// One statement for any number of events, which also notifies channel
// `events` per agent (PostgreSQL sends it at commit, once per distinct payload).
const insertPostgres = statement<
  { id: bigint },
  [
    first: number,
    occurredAt: Date,
    types: string[],
    agentIds: string[],
    taskIds: (string | null)[],
    data: string[],
    projectId: string,
  ]
>("events_insert", {
  postgresql: `WITH inserted AS (
      INSERT INTO events (id, project_id, type, occurred_at, agent_id, task_id, data)
      SELECT ${postgresOrderedId("$1 + e.ordinal - 1")}, $7, e.type, $2, e.agent_id, e.task_id, e.data
      FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS e(type, agent_id, task_id, data, ordinal)
      RETURNING id, agent_id)
    SELECT id, pg_notify('${eventsChannel}', agent_id) AS notified FROM inserted ORDER BY id`,
});

// SQLite: writers are serialised, so a counter gives ids in commit order. It
// lives in outbox_cursors rather than in MAX(id), which a purge could lower.
const reserveSqliteIds = statement<{ position: bigint }, [count: number]>("events_reserve_ids", {
  sqlite: `INSERT INTO outbox_cursors (name, position) VALUES ('events:last_id', $1)
    ON CONFLICT (name) DO UPDATE SET position = position + excluded.position
    RETURNING position`,
});
const insertSqlite = statement<
  unknown,
  [id: bigint, type: string, occurredAt: Date, agentId: string, taskId: string | null, data: string, projectId: string]
>("events_insert_one", {
  sqlite: `INSERT INTO events (id, project_id, type, occurred_at, agent_id, task_id, data)
    VALUES ($1, $7, $2, $3, $4, $5, $6)`,
});

/**
 * Records `events` of project `projectId`, in this order, inside `tx`: the
 * change and its events commit together or not at all. After the commit,
 * channel `events` is notified (`eventsChannel`) with each agent's id.
 * Returns the events' ids.
 */
export async function recordEvents(
  tx: Tx,
  projectId: string,
  events: readonly NewEvent[],
  occurredAt = new Date(),
): Promise<bigint[]> {
  if (events.length === 0) return [];
  const data = events.map((event) => JSON.stringify(event.data));
  if (tx.provider === "postgresql") {
    const first = tx.reserveOrdinals(events.length);
    if (first + events.length > ordinalsPerTransaction) throw new Error("Too many events in one transaction");
    const rows = await tx.all(insertPostgres, [
      first,
      occurredAt,
      events.map((event) => event.type),
      events.map((event) => event.agentId),
      events.map((event) => event.taskId ?? null),
      data,
      projectId,
    ]);
    return rows.map((row) => row.id);
  }
  const reserved = await tx.get(reserveSqliteIds, [events.length]);
  if (!reserved) throw new Error("No event ids were reserved");
  const ids = events.map((_, i) => reserved.position - BigInt(events.length - 1 - i));
  for (const [i, event] of events.entries()) {
    await tx.run(insertSqlite, [
      ids[i] as bigint,
      event.type,
      occurredAt,
      event.agentId,
      event.taskId ?? null,
      data[i] as string,
      projectId,
    ]);
  }
  for (const agentId of new Set(events.map((event) => event.agentId))) await tx.notify(eventsChannel, agentId);
  return ids;
}
