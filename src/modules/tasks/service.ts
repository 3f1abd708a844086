import { randomUUID } from "node:crypto";
import type { Database, Queryable, Tx } from "../../db/index.js";
import { AppError, notFound } from "../../errors.js";
import type { KeptAnswer } from "../../idempotency/kept-answer.js";
import { taskRetries } from "../../metrics/registry.js";
import type { Acting } from "../../resources/acting.js";
import {
  type Changes,
  changesOf,
  lostRace,
  nextUpdatedAt,
  requireVersion,
  retryLostRaces,
  type VersionCondition,
} from "../../resources/conditional-writes.js";
import type { JsonObject } from "../../resources/json.js";
import { listPage } from "../../resources/list-sql.js";
import type { Page } from "../../resources/lists.js";
import { type Metadata, mergeMetadata } from "../../resources/metadata.js";
import { checkedMetadata, writePairs } from "../../resources/metadata-pairs.js";
import { isUuid } from "../../resources/schemas.js";
import { auditService } from "../audit/service.js";
import { recordEvents } from "../events/outbox.js";
import type { EventType } from "../events/types.js";
import { defaultRetryPolicy, type RetryPolicy } from "./outcomes.js";
import { byCreation, type TaskRow, taskChangeFields, toTask, toText, updateArgs } from "./rows.js";
import type { TaskCreateBody, TaskListInput, TaskOut, TaskUpdateBody } from "./schemas.js";
import { type NewTaskValues, taskList, taskStatements } from "./sql.js";
import { newTaskSchedule, planTaskUpdate } from "./update-plan.js";

/** What a schedule's run creates: the fields of a task it sets (docs/api/schedules.md). */
export interface ScheduledTaskTemplate {
  title: string;
  description: string | null;
  priority: number;
  input: JsonObject | null;
  max_attempts: number;
  metadata: Metadata;
  concurrency_key: string | null;
}

const taskNotFound = () => notFound("Task");

/**
 * A task's final change is recorded as task.succeeded, task.failed or
 * task.cancelled rather than task.updated (docs/api/events.md); the other
 * kinds (task.lease_expired, task.retry_scheduled, …) keep theirs.
 */
export function finalType(type: EventType, task: TaskOut, changes: Changes): EventType {
  if (type !== "task.updated" || changes.status === undefined) return type;
  if (task.status === "succeeded" || task.status === "failed" || task.status === "cancelled") {
    return `task.${task.status}`;
  }
  return type;
}
const agentNotFound = () => notFound("Agent");

async function agentExists(db: Queryable, projectId: string, agentId: string): Promise<boolean> {
  return isUuid(agentId) && (await db.get(taskStatements.agentExists, [agentId, projectId])) !== undefined;
}

/**
 * "Agent not found" when the agent is missing (or another project's), else
 * "Task not found" (also for another agent's task).
 */
async function missing(db: Queryable, projectId: string, agentId: string): Promise<AppError> {
  return (await agentExists(db, projectId, agentId)) ? taskNotFound() : agentNotFound();
}

/**
 * Inserts a new task (`values[5]` is its creation time) with its metadata
 * pairs and its task.created event; undefined when the insert made no row.
 */
async function insertTask(
  tx: Tx,
  insert: typeof taskStatements.insert,
  metadata: Metadata,
  values: NewTaskValues,
): Promise<TaskOut | undefined> {
  const row = await tx.get(insert, values);
  if (!row) return undefined;
  const now = values[5];
  await writePairs(tx, taskStatements, row.id, now, metadata, false);
  const task = toTask(row);
  await recordEvents(
    tx,
    row.project_id,
    [{ type: "task.created", agentId: row.agent_id, taskId: task.id, data: { task } }],
    now,
  );
  return task;
}

/**
 * Every write runs in one transaction with the events it records (docs/api/events.md): no change without its event, no event without its change.
 */
export const tasksService = {
  /** How many tasks are in each status (the /metrics gauges). */
  async countByStatus(db: Database): Promise<Map<string, number>> {
    const rows = await db.all(taskStatements.countByStatus, []);
    return new Map(rows.map((row) => [row.status, Number(row.count)]));
  },

  /** A page of an agent's tasks (docs/http.md): filtered, in either order, from a cursor, with the total when asked for. */
  async list(
    db: Database,
    projectId: string,
    { agent_id: agentId, concurrency_key: concurrencyKey, ...filter }: TaskListInput,
  ): Promise<Page<TaskOut>> {
    if (!(await agentExists(db, projectId, agentId))) throw agentNotFound();
    return listPage(db, taskList, { ...filter, scopeId: agentId, column: concurrencyKey }, toTask);
  },

  async get(db: Database, projectId: string, agentId: string, id: string): Promise<TaskOut> {
    const row = isUuid(agentId) && isUuid(id) ? await db.get(taskStatements.get, [id, agentId, projectId]) : undefined;
    if (!row) throw await missing(db, projectId, agentId);
    return toTask(row);
  },

  /** A stopped agent accepts no new tasks (docs/api/agents.md), checked in the insert itself. */
  async create(
    db: Database,
    projectId: string,
    agentId: string,
    input: TaskCreateBody,
    answer?: KeptAnswer,
  ): Promise<TaskOut> {
    if (!isUuid(agentId)) throw agentNotFound();
    const now = new Date();
    const { maxAttempts, runAt, deadlineAt } = newTaskSchedule(input, now);
    const metadata = input.metadata ?? {};
    return db.transaction(async (tx) => {
      const task = await insertTask(tx, taskStatements.insert, metadata, [
        randomUUID(),
        input.title,
        input.description ?? null,
        input.priority,
        toText(input.input),
        now,
        agentId,
        maxAttempts,
        runAt,
        deadlineAt,
        JSON.stringify(metadata),
        projectId,
        input.concurrency_key ?? null,
        null,
        null,
      ]);
      if (!task) {
        if (!(await agentExists(tx, projectId, agentId))) throw agentNotFound();
        throw new AppError("conflict", "Agent is stopped and accepts no new tasks", { agent_status: "stopped" });
      }
      await answer?.keep(tx, task);
      return task;
    });
  },

  /**
   * A schedule's task (docs/api/schedules.md), in the caller's transaction,
   * with its task.created event: undefined when the agent is gone or stopped,
   * or when the schedule already has a task for `scheduledFor`.
   */
  createScheduled: (
    tx: Tx,
    projectId: string,
    agentId: string,
    made: { scheduleId: string; scheduledFor: Date | null; runAt: Date; deadlineAt: Date | null },
    template: ScheduledTaskTemplate,
    now: Date,
  ): Promise<TaskOut | undefined> =>
    insertTask(tx, taskStatements.insertScheduled, template.metadata, [
      randomUUID(),
      template.title,
      template.description,
      template.priority,
      toText(template.input),
      now,
      agentId,
      template.max_attempts,
      made.runAt,
      made.deadlineAt,
      JSON.stringify(template.metadata),
      projectId,
      template.concurrency_key,
      made.scheduleId,
      made.scheduledFor,
    ]),

  /** Whether the task is final (succeeded, failed, cancelled) or gone. */
  async isFinalOrGone(db: Queryable, projectId: string, id: string): Promise<boolean> {
    const row = await db.get(taskStatements.status, [id, projectId]);
    return row === undefined || !["pending", "running"].includes(row.status);
  },

  /**
   * Changes the given fields; a status change must be allowed by docs/api/tasks.md's
   * table from the state the task is in when the write happens, and a leased
   * task's status is its worker's (docs/api/leases.md: planTaskUpdate). Values
   * equal to the stored ones change nothing: the same state again is a
   * no-op, with no new version and no event. `accepted` makes it
   * conditional (docs/http.md).
   */
  async update(
    db: Database,
    projectId: string,
    agentId: string,
    id: string,
    patch: TaskUpdateBody,
    retry: RetryPolicy = defaultRetryPolicy,
    accepted?: VersionCondition,
  ): Promise<TaskOut> {
    if (!isUuid(agentId) || !isUuid(id)) throw await missing(db, projectId, agentId);
    let retried = false;
    const updated = await retryLostRaces("Task", () =>
      db.transaction(async (tx) => {
        retried = false;
        const row = await tx.get(taskStatements.get, [id, agentId, projectId]);
        if (!row) throw await missing(tx, projectId, agentId);
        const before = toTask(row);
        requireVersion("Task", before.version, accepted);
        const updatedAt = nextUpdatedAt(before.updated_at);
        const planned = planTaskUpdate(row, patch, updatedAt, retry);
        if (patch.metadata) {
          const merged = checkedMetadata(mergeMetadata(before.metadata, patch.metadata));
          planned.row.metadata = JSON.stringify(merged);
        }
        const changes = changesOf(before, toTask(planned.row), taskChangeFields);
        if (!changes) return before;
        const written = await tx.get(taskStatements.update, updateArgs(planned.row, updatedAt, before.version));
        if (!written) return lostRace;
        if (changes.metadata) {
          await writePairs(tx, taskStatements, id, new Date(before.created_at), JSON.parse(written.metadata), true);
        }
        const task = toTask(written);
        const event = { type: finalType(planned.type, task, changes), agentId, taskId: id, data: { task, changes } };
        await recordEvents(tx, projectId, [event], updatedAt);
        retried = planned.type === "task.retry_scheduled";
        return task;
      }),
    );
    // Counted once committed.
    if (retried) taskRetries.inc();
    return updated;
  },

  /** A task's row as stored, read in `tx` (leases decide their writes on it); undefined when it is gone. */
  row: (tx: Queryable, projectId: string, id: string, agentId: string) =>
    tx.get(taskStatements.get, [id, agentId, projectId]),

  /**
   * Writes `after`, a row decided on `before`, only if the stored row still
   * has `before`'s version, with its event (`type`, the changes listed):
   * lostRace when another write came first. Equal rows write nothing.
   */
  async writeRow(
    tx: Tx,
    before: TaskRow,
    after: TaskRow,
    updatedAt: Date,
    type: EventType = "task.updated",
  ): Promise<TaskRow | typeof lostRace> {
    const changes = changesOf(toTask(before), toTask(after), taskChangeFields);
    if (!changes) return before;
    const written = await tx.get(taskStatements.update, updateArgs(after, updatedAt, before.version));
    if (!written) return lostRace;
    const task = toTask(written);
    const event = {
      type: finalType(type, task, changes),
      agentId: task.agent_id,
      taskId: task.id,
      data: { task, changes },
    };
    await recordEvents(tx, written.project_id, [event], updatedAt);
    return written;
  },

  /** Deletes every task of an agent being deleted; returns them in list order, for their task.deleted events. */
  async removeAllOfAgent(tx: Tx, projectId: string, agentId: string): Promise<TaskOut[]> {
    return (await tx.all(taskStatements.deleteOfAgent, [agentId, projectId])).map(toTask).sort(byCreation);
  },

  /**
   * Deletes the task, with its event and its entry in the audit log.
   * Conditional (`accepted`), the deletion names the version it found
   * acceptable, as updates do.
   */
  async remove(db: Database, acting: Acting, agentId: string, id: string, accepted?: VersionCondition): Promise<void> {
    const { projectId } = acting;
    if (!isUuid(agentId) || !isUuid(id)) throw await missing(db, projectId, agentId);
    await retryLostRaces("Task", () =>
      db.transaction(async (tx) => {
        let row = accepted ? undefined : await tx.get(taskStatements.delete, [id, agentId, projectId]);
        if (accepted) {
          const current = await tx.get(taskStatements.get, [id, agentId, projectId]);
          if (!current) throw await missing(tx, projectId, agentId);
          requireVersion("Task", current.version, accepted);
          row = await tx.get(taskStatements.deleteAtVersion, [id, agentId, current.version, projectId]);
          if (!row) return lostRace;
        }
        if (!row) throw await missing(tx, projectId, agentId);
        const task = toTask(row);
        await recordEvents(tx, projectId, [{ type: "task.deleted", agentId, taskId: id, data: { task } }]);
        await auditService.record(
          tx,
          acting,
          "task.deleted",
          { type: "task", id },
          { agent_id: agentId, title: task.title },
        );
      }),
    );
  },
};
