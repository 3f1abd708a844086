import type { Db } from "../db.js";
import { notFound } from "../errors.js";
import type { AgentCreateInput, AgentListInput, AgentOut, AgentStatus, AgentUpdateBody } from "../schemas/agents.js";
import { isUuid } from "../schemas/common.js";
import { changedFields, conditionalUpdate } from "./conditional-update.js";
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

async function findRow(db: Db, id: string): Promise<AgentRow> {
  const row = isUuid(id) ? await db.agent.findUnique({ where: { id }, select: agentSelect }) : null;
  if (!row) throw agentNotFound();
  return row;
}

export const agentsService = {
  async list(db: Db, { skip, limit, status }: AgentListInput): Promise<AgentOut[]> {
    const rows = await db.agent.findMany({
      where: status ? { status } : undefined,
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      skip,
      take: limit,
      select: agentSelect,
    });
    return rows.map(toAgent);
  },

  async get(db: Db, id: string): Promise<AgentOut> {
    return toAgent(await findRow(db, id));
  },

  async create(db: Db, input: AgentCreateInput): Promise<AgentOut> {
    const row = await db.agent.create({ data: { name: input.name, type: input.type }, select: agentSelect });
    return toAgent(row);
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
