import type { Db } from "../db.js";
import { notFound } from "../errors.js";
import type { AgentCreateInput, AgentListInput, AgentOut } from "../schemas/agents.js";
import { isUuid } from "../schemas/common.js";

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
    if (!isUuid(id)) throw agentNotFound();
    const { count } = await db.agent.updateMany({ where: { id }, data: { name: input.name, type: input.type } });
    if (count === 0) throw agentNotFound();
    return agentsService.get(db, id);
  },

  /** Deletes the agent and, by the foreign key's cascade, its tasks. */
  async remove(db: Db, id: string): Promise<void> {
    if (!isUuid(id)) throw agentNotFound();
    const { count } = await db.agent.deleteMany({ where: { id } });
    if (count === 0) throw agentNotFound();
  },
};
