import { randomUUID } from "node:crypto";
import type { Database } from "../../db/index.js";
import { notFound } from "../../errors.js";
import type { KeptAnswer } from "../../idempotency/kept-answer.js";
import type { Acting } from "../../resources/acting.js";
import {
  changesOf,
  given,
  lostRace,
  nextUpdatedAt,
  requireVersion,
  retryLostRaces,
  type VersionCondition,
} from "../../resources/conditional-writes.js";
import { listPage } from "../../resources/list-sql.js";
import type { Page } from "../../resources/lists.js";
import type { Metadata } from "../../resources/metadata.js";
import { mergeMetadata } from "../../resources/metadata.js";
import { checkedMetadata, writePairs } from "../../resources/metadata-pairs.js";
import { isUuid } from "../../resources/schemas.js";
import { isStatusChange } from "../../resources/transitions.js";
import { auditService } from "../audit/service.js";
import { recordEvents } from "../events/outbox.js";
import type { EventData } from "../events/types.js";
import { schedulesService } from "../schedules/service.js";
import { tasksService } from "../tasks/service.js";
import type { AgentCreateInput, AgentListInput, AgentOut, AgentStatus, AgentUpdateBody } from "./schemas.js";
import { agentList, agentStatements, toAgent } from "./sql.js";

export { toAgent };

export const agentNotFound = () => notFound("Agent");

/**
 * A creation on PostgreSQL: one statement (`createAlone`), which commits by
 * itself, and whose event carries the agent as it is written, every value of
 * which is known before the insert. With `answer`, the same statement keeps
 * the answer for its Idempotency-Key.
 */
async function createAlone(
  db: Database,
  projectId: string,
  input: AgentCreateInput,
  now: Date,
  metadata: string,
  answer: KeptAnswer | undefined,
): Promise<AgentOut> {
  const id = randomUUID();
  const created = now.toISOString();
  const { name, type } = input;
  const agent = toAgent({
    id,
    name,
    type,
    status: "idle",
    created_at: created,
    updated_at: created,
    version: 1,
    metadata,
  });
  const data = JSON.stringify({ agent } satisfies EventData);
  const kept = answer?.columns?.(agent, now);
  const written = kept
    ? await db.get(agentStatements.createAloneKept, [id, name, type, now, metadata, data, projectId, ...kept])
    : await db.get(agentStatements.createAlone, [id, name, type, now, metadata, data, projectId]);
  if (!written) {
    if (answer) throw answer.taken();
    throw new Error("The insert returned no row");
  }
  // The answer is the agent the key kept, value for value.
  return agent;
}

/** The lifecycle (docs/api/agents.md): the states an agent may move to from each state. */
export const agentTransitions: Readonly<Record<AgentStatus, readonly AgentStatus[]>> = {
  idle: ["running", "stopped"],
  running: ["idle", "paused", "error", "stopped"],
  paused: ["running", "stopped"],
  error: ["idle", "stopped"],
  stopped: ["idle"],
};

const updatable = ["name", "type", "status", "metadata"] as const;

/**
 * Every write runs in one transaction with the events it records (docs/api/events.md): no change without its event, no event without its change.
 */
export const agentsService = {
  /** How many agents are in each status, across projects (the /metrics gauges). */
  async countByStatus(db: Database): Promise<Map<string, number>> {
    const rows = await db.all(agentStatements.countByStatus, []);
    return new Map(rows.map((row) => [row.status, Number(row.count)]));
  },

  /** A page of the project's agents (docs/http.md): filtered, in either order, from a cursor, with the total when asked for. */
  async list(db: Database, projectId: string, input: AgentListInput): Promise<Page<AgentOut>> {
    return listPage(db, agentList, { ...input, scopeId: projectId }, toAgent);
  },

  async get(db: Database, projectId: string, id: string): Promise<AgentOut> {
    const row = isUuid(id) ? await db.get(agentStatements.get, [id, projectId]) : undefined;
    if (!row) throw agentNotFound();
    return toAgent(row);
  },

  /**
   * `answer`: the request's Idempotency-Key, whose answer is kept with the
   * creation (on PostgreSQL in its one statement, when the key is not
   * already held by this request).
   */
  async create(db: Database, projectId: string, input: AgentCreateInput, answer?: KeptAnswer): Promise<AgentOut> {
    const now = new Date();
    const metadata = JSON.stringify(input.metadata ?? {});
    if (db.provider === "postgresql" && (!answer || answer.columns)) {
      return createAlone(db, projectId, input, now, metadata, answer);
    }
    return db.transaction(async (tx) => {
      const row = await tx.get(agentStatements.insert, [
        randomUUID(),
        input.name,
        input.type,
        now,
        metadata,
        projectId,
      ]);
      if (!row) throw new Error("The insert returned no row");
      await writePairs(tx, agentStatements, row.id, now, input.metadata ?? {}, false);
      const agent = toAgent(row);
      await recordEvents(tx, projectId, [{ type: "agent.created", agentId: agent.id, data: { agent } }], now);
      await answer?.keep(tx, agent);
      return agent;
    });
  },

  /** Full replacement of name, type and metadata (absent: `{}`); status and created_at are kept. */
  async replace(
    db: Database,
    projectId: string,
    id: string,
    input: AgentCreateInput,
    accepted?: VersionCondition,
  ): Promise<AgentOut> {
    const body = { name: input.name, type: input.type };
    return agentsService.update(db, projectId, id, body, accepted, input.metadata ?? {});
  },

  /**
   * Changes the given fields; a status change must be allowed by the
   * lifecycle table from the state the agent is in when the write happens.
   * Values equal to the stored ones change nothing: the same state again is
   * a no-op, with no new version and no event. `patch.metadata` is merged
   * into the stored metadata; `replacement` replaces it. `accepted` makes it
   * conditional (docs/http.md).
   */
  async update(
    db: Database,
    projectId: string,
    id: string,
    patch: AgentUpdateBody,
    accepted?: VersionCondition,
    replacement?: Metadata,
  ): Promise<AgentOut> {
    if (!isUuid(id)) throw agentNotFound();
    return retryLostRaces("Agent", () =>
      db.transaction(async (tx) => {
        const row = await tx.get(agentStatements.get, [id, projectId]);
        if (!row) throw agentNotFound();
        const before = toAgent(row);
        requireVersion("Agent", before.version, accepted);
        const { status, metadata, ...fields } = patch;
        const after = { ...before, ...given(fields) };
        if (replacement) after.metadata = replacement;
        else if (metadata) after.metadata = checkedMetadata(mergeMetadata(before.metadata, metadata));
        if (status && isStatusChange(agentTransitions, before.status, status)) after.status = status;
        const changes = changesOf(before, after, updatable);
        if (!changes) return before;
        const updatedAt = nextUpdatedAt(before.updated_at);
        const written = await tx.get(agentStatements.update, [
          after.name,
          after.type,
          after.status,
          updatedAt,
          id,
          before.version,
          JSON.stringify(after.metadata),
          projectId,
        ]);
        if (!written) return lostRace;
        if (changes.metadata)
          await writePairs(tx, agentStatements, id, new Date(before.created_at), after.metadata, true);
        const agent = toAgent(written);
        const event = { type: "agent.updated" as const, agentId: id, data: { agent, changes } };
        await recordEvents(tx, projectId, [event], updatedAt);
        return agent;
      }),
    );
  },

  /**
   * Deletes the agent, its tasks and its schedules: one task.deleted per
   * task, one schedule.deleted per schedule, then agent.deleted, and the deletion in the audit log. Conditional
   * (`accepted`), the agent's deletion names the version it was locked at,
   * which nothing else can change meanwhile.
   */
  async remove(db: Database, acting: Acting, id: string, accepted?: VersionCondition): Promise<void> {
    if (!isUuid(id)) throw agentNotFound();
    const { projectId } = acting;
    await db.transaction(async (tx) => {
      const locked = await tx.get(agentStatements.lock, [id, projectId]);
      if (!locked) throw agentNotFound();
      requireVersion("Agent", locked.version, accepted);
      const tasks = await tasksService.removeAllOfAgent(tx, projectId, id);
      const schedules = await schedulesService.removeAllOfAgent(tx, projectId, id);
      const row = accepted
        ? await tx.get(agentStatements.deleteAtVersion, [id, locked.version, projectId])
        : await tx.get(agentStatements.delete, [id, projectId]);
      if (!row) throw agentNotFound();
      const agent = toAgent(row);
      await recordEvents(tx, projectId, [
        ...tasks.map((task) => ({ type: "task.deleted" as const, agentId: id, taskId: task.id, data: { task } })),
        ...schedules.map((schedule) => ({ type: "schedule.deleted" as const, agentId: id, data: { schedule } })),
        { type: "agent.deleted", agentId: id, data: { agent } },
      ]);
      await auditService.record(
        tx,
        acting,
        "agent.deleted",
        { type: "agent", id },
        {
          name: agent.name,
          tasks: tasks.length,
        },
      );
    });
  },
};
