import { randomUUID } from "node:crypto";
import type { Db } from "../db.js";
import { notFound } from "../errors.js";
import type { AgentCreateInput, AgentListInput, AgentOut, AgentStatus, AgentUpdateBody } from "../schemas/agents.js";
import { isUuid } from "../schemas/common.js";
import { changedFields, conditionalUpdate } from "./conditional-update.js";
import { readQuery, readRows } from "./read-sql.js";
import { agentTransitions, isStatusChange } from "./transitions.js";

/** Only these columns ever leave the database for an agent. */
export const agentSelect = {
  id: true,
  name: true,
  type: true,
  status: true,
  createdAt: true,
  updatedAt: true,
} as const;

type AgentRow = { id: string; name: string; type: string; status: string; createdAt: Date; updatedAt: Date };

export const toAgent = (row: AgentRow): AgentOut => ({
  id: row.id,
  name: row.name,
  type: row.type as AgentOut["type"],
  status: row.status as AgentOut["status"],
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

export const agentNotFound = () => notFound("Agent");

/** The row a conditional update decides on, through Prisma (its `updatedAt` is the write's condition). */
async function findRow(db: Db, id: string): Promise<AgentRow> {
  const row = isUuid(id) ? await db.agent.findUnique({ where: { id }, select: agentSelect }) : null;
  if (!row) throw agentNotFound();
  return row;
}

// Hot reads skip Prisma's query planning, which costs several times the
// query itself (bench/README.md): the SQL is sent as written through the
// driver adapter (services/read-sql.ts). Writes stay on the Prisma client.
const byId = readQuery`SELECT id, name, type, status, created_at, updated_at FROM agents WHERE id = ${"string"}`;
// Ordered by (created_at, id): served by agents_created_at_id_idx, or with a
// status by agents_status_created_at_id_idx (the plans are in bench/README.md).
const page = readQuery`SELECT id, name, type, status, created_at, updated_at
  FROM agents ORDER BY created_at, id LIMIT ${"int"} OFFSET ${"int"}`;
const pageByStatus = readQuery`SELECT id, name, type, status, created_at, updated_at
  FROM agents WHERE status = ${"string"} ORDER BY created_at, id LIMIT ${"int"} OFFSET ${"int"}`;
const dateColumns = [4, 5];

const agentOf = (row: unknown[]) =>
  ({
    id: row[0],
    name: row[1],
    type: row[2],
    status: row[3],
    created_at: row[4],
    updated_at: row[5],
  }) as AgentOut;

export const agentsService = {
  async list(db: Db, { skip, limit, status }: AgentListInput): Promise<AgentOut[]> {
    const rows = status
      ? await readRows(db, pageByStatus, [status, limit, skip], dateColumns)
      : await readRows(db, page, [limit, skip], dateColumns);
    return rows.map(agentOf);
  },

  async get(db: Db, id: string): Promise<AgentOut> {
    const [row] = isUuid(id) ? await readRows(db, byId, [id], dateColumns) : [];
    if (!row) throw agentNotFound();
    return agentOf(row);
  },

  /**
   * One raw INSERT (a third of `agent.create`'s cost): the id and timestamps
   * are made here, as Prisma's @default(uuid()) / now() / @updatedAt would,
   * and the Agent is answered from them without reading the row back.
   */
  async create(db: Db, input: AgentCreateInput): Promise<AgentOut> {
    const id = randomUUID();
    const now = new Date();
    await db.$executeRaw`INSERT INTO agents (id, name, type, status, created_at, updated_at)
      VALUES (${id}, ${input.name}, ${input.type}, 'idle', ${now}, ${now})`;
    const at = now.toISOString();
    return { id, name: input.name, type: input.type, status: "idle", created_at: at, updated_at: at };
  },

  /** Full replacement of name and type; status and created_at are kept. */
  async replace(db: Db, id: string, input: AgentCreateInput): Promise<AgentOut> {
    return agentsService.update(db, id, { name: input.name, type: input.type });
  },

  /**
   * Changes the given fields; a status change must be allowed by SPEC §3's
   * table from the state the agent is in when the write happens. Fields equal
   * to the stored ones are not written, so the same state again is a no-op.
   */
  async update(db: Db, id: string, patch: AgentUpdateBody): Promise<AgentOut> {
    const row = await conditionalUpdate({
      what: "Agent",
      read: () => findRow(db, id),
      decide: (current) => {
        const { status, ...fields } = patch;
        const data = changedFields<AgentRow>(fields, current);
        if (status && isStatusChange(agentTransitions, current.status as AgentStatus, status)) data.status = status;
        return data;
      },
      write: async (current, data) => {
        const where = { id, status: current.status, updatedAt: current.updatedAt };
        const [written] = await db.agent.updateManyAndReturn({ where, data, select: agentSelect });
        return written;
      },
    });
    return toAgent(row);
  },

  /** Deletes the agent and, by the foreign key's cascade, its tasks. */
  async remove(db: Db, id: string): Promise<void> {
    if (!isUuid(id)) throw agentNotFound();
    const { count } = await db.agent.deleteMany({ where: { id } });
    if (count === 0) throw agentNotFound();
  },
};
