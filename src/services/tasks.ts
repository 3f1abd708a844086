import { randomUUID } from "node:crypto";
import { type Db, providerOfClient } from "../db.js";
import { AppError, notFound } from "../errors.js";
import { Prisma } from "../generated/sqlite/client.js";
import { isUuid } from "../schemas/common.js";
import type { JsonObject, JsonValue } from "../schemas/json.js";
import type { TaskCreateBody, TaskListInput, TaskOut, TaskStatus, TaskUpdateBody } from "../schemas/tasks.js";
import { agentNotFound } from "./agents.js";
import { changedFields, conditionalUpdate } from "./conditional-update.js";
import { isStatusChange, taskTransitions } from "./transitions.js";

/** Only these columns ever leave the database for a task. */
const taskSelect = {
  id: true,
  agentId: true,
  title: true,
  description: true,
  priority: true,
  status: true,
  input: true,
  result: true,
  createdAt: true,
  updatedAt: true,
} as const;

type TaskRow = {
  id: string;
  agentId: string;
  title: string;
  description: string | null;
  priority: number;
  status: string;
  input: string | null;
  result: string | null;
  createdAt: Date;
  updatedAt: Date;
};

// JSON is stored as the text the client's value serialises to, so it comes
// back exactly as sent (key order included); JSON null is stored as NULL.
const toText = (value: JsonValue | undefined) => (value === null || value === undefined ? null : JSON.stringify(value));
const fromText = (text: string | null) => (text === null ? null : JSON.parse(text));

const toTask = (row: TaskRow): TaskOut => ({
  id: row.id,
  agent_id: row.agentId,
  title: row.title,
  description: row.description,
  priority: row.priority,
  status: row.status as TaskStatus,
  input: fromText(row.input) as JsonObject | null,
  result: fromText(row.result) as JsonValue,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

const taskNotFound = () => notFound("Task");

async function agentExists(db: Db, agentId: string): Promise<boolean> {
  return isUuid(agentId) && (await db.agent.findUnique({ where: { id: agentId }, select: { id: true } })) !== null;
}

/** "Agent not found" when the agent is missing, else "Task not found" (also for another agent's task). */
async function missing(db: Db, agentId: string): Promise<AppError> {
  return (await agentExists(db, agentId)) ? taskNotFound() : agentNotFound();
}

async function findRow(db: Db, agentId: string, id: string): Promise<TaskRow> {
  const row =
    isUuid(agentId) && isUuid(id) ? await db.task.findFirst({ where: { id, agentId }, select: taskSelect }) : null;
  if (!row) throw await missing(db, agentId);
  return row;
}

export const tasksService = {
  async list(db: Db, { agent_id: agentId, skip, limit, status }: TaskListInput): Promise<TaskOut[]> {
    if (!(await agentExists(db, agentId))) throw agentNotFound();
    const rows = await db.task.findMany({
      where: { agentId, ...(status && { status }) },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      skip,
      take: limit,
      select: taskSelect,
    });
    return rows.map(toTask);
  },

  async get(db: Db, agentId: string, id: string): Promise<TaskOut> {
    return toTask(await findRow(db, agentId, id));
  },

  /**
   * A stopped agent accepts no new tasks (SPEC §3). The check and the insert
   * are one statement, so no stop can come between them: SQLite runs it
   * atomically, and on PostgreSQL `FOR SHARE` makes it wait for a stop in
   * progress and then see `stopped` (or makes the stop wait for the task).
   * An interactive transaction is avoided on purpose: the SQLite adapter runs
   * other requests' statements on the same connection while it is open.
   */
  async create(db: Db, agentId: string, input: TaskCreateBody): Promise<TaskOut> {
    if (!isUuid(agentId)) throw agentNotFound();
    const now = new Date();
    const lock = providerOfClient(db) === "postgresql" ? Prisma.sql`FOR SHARE` : Prisma.empty;
    const [row] = await db.$queryRaw<TaskRow[]>`
      INSERT INTO tasks (id, agent_id, title, description, priority, status, input, result, created_at, updated_at)
      SELECT ${randomUUID()}, id, ${input.title}, ${input.description ?? null}, ${input.priority}, 'pending',
             ${toText(input.input)}, NULL, ${now}, ${now}
      FROM agents WHERE id = ${agentId} AND status <> 'stopped' ${lock}
      RETURNING id, agent_id AS "agentId", title, description, priority, status, input, result,
                created_at AS "createdAt", updated_at AS "updatedAt"`;
    if (row) return toTask(row);
    if (!(await agentExists(db, agentId))) throw agentNotFound();
    throw new AppError("conflict", "Agent is stopped and accepts no new tasks", { agent_status: "stopped" });
  },

  /**
   * Changes the given fields; a status change must be allowed by SPEC §4's
   * table from the state the task is in when the write happens. Fields equal
   * to the stored ones are not written, so the same state again is a no-op.
   */
  async update(db: Db, agentId: string, id: string, patch: TaskUpdateBody): Promise<TaskOut> {
    const row = await conditionalUpdate({
      what: "Task",
      read: () => findRow(db, agentId, id),
      decide: (current) => {
        const { status, result, ...fields } = patch;
        const data = changedFields<TaskRow>(
          { ...fields, ...(result !== undefined && { result: toText(result) }) },
          current,
        );
        if (status && isStatusChange(taskTransitions, current.status as TaskStatus, status)) data.status = status;
        return data;
      },
      write: async (current, data) => {
        const where = { id, agentId, status: current.status, updatedAt: current.updatedAt };
        const [written] = await db.task.updateManyAndReturn({ where, data, select: taskSelect });
        return written;
      },
    });
    return toTask(row);
  },

  async remove(db: Db, agentId: string, id: string): Promise<void> {
    const { count } =
      isUuid(agentId) && isUuid(id) ? await db.task.deleteMany({ where: { id, agentId } }) : { count: 0 };
    if (count === 0) throw await missing(db, agentId);
  },
};
