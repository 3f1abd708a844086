import { randomUUID } from "node:crypto";
import type { Config } from "../../config.js";
import type { Database, Queryable, Tx } from "../../db/index.js";
import { AppError, notFound, validationError } from "../../errors.js";
import type { KeptAnswer } from "../../idempotency/kept-answer.js";
import type { Acting } from "../../resources/acting.js";
import { changesOf, lostRace, nextUpdatedAt, retryLostRaces } from "../../resources/conditional-writes.js";
import { decodeCursor, encodeCursor, type Page } from "../../resources/lists.js";
import { instantOf, isUuid } from "../../resources/schemas.js";
import { auditService } from "../audit/service.js";
import { recordEvents } from "../events/outbox.js";
import type { TaskOut } from "../tasks/schemas.js";
import { tasksService } from "../tasks/service.js";
import { type Clock, deadlineOf, nextRunAfter } from "./runs.js";
import type {
  ScheduleCreateBody,
  ScheduleListInput,
  ScheduleOut,
  ScheduleTaskOut,
  ScheduleUpdateBody,
} from "./schemas.js";
import {
  type ScheduleRow,
  type ScheduleValues,
  scheduleStatements,
  schedulesChannel,
  templateOf,
  toSchedule,
} from "./sql.js";

export const scheduleNotFound = () => notFound("Schedule");
const agentNotFound = () => notFound("Agent");

async function agentExists(db: Queryable, projectId: string, agentId: string): Promise<boolean> {
  return isUuid(agentId) && (await db.get(scheduleStatements.agentExists, [agentId, projectId])) !== undefined;
}

/** "Agent not found" when the agent is missing (or another project's), else "Schedule not found". */
async function missing(db: Queryable, projectId: string, agentId: string): Promise<AppError> {
  return (await agentExists(db, projectId, agentId)) ? scheduleNotFound() : agentNotFound();
}

/** The template as stored: every field, defaults filled in. */
function templateText(task: ScheduleCreateBody["task"]): string {
  const template: ScheduleTaskOut = {
    title: task.title,
    description: task.description ?? null,
    priority: task.priority,
    input: task.input ?? null,
    max_attempts: task.max_attempts ?? 1,
    metadata: task.metadata ?? {},
    deadline_seconds: task.deadline_seconds ?? null,
    concurrency_key: task.concurrency_key ?? null,
  };
  return JSON.stringify(template);
}

/** The rules the schema cannot check alone: the interval's floor (a setting), a cron that never runs. */
function checkClock(clock: Clock, config: Config, now: number): void {
  const floor = config.schedules.minEverySeconds;
  if (clock.every_seconds !== null && clock.every_seconds < floor) {
    throw validationError([{ field: "every_seconds", message: `must be at least ${floor}` }]);
  }
  if (clock.cron !== null && nextRunAfter({ ...clock, paused: false, start_at: null, end_at: null }, now) === null) {
    throw validationError([{ field: "cron", message: "never matches a date" }]);
  }
  if (clock.start_at && clock.end_at && instantOf(clock.end_at) < instantOf(clock.start_at)) {
    throw validationError([{ field: "end_at", message: "must not be earlier than start_at" }]);
  }
}

const dateOf = (iso: string | null) => (iso === null ? null : instantOf(iso));

/** The values of insert/update for `schedule` as decided, its next run time computed from `now`. */
function valuesOf(schedule: Clock & { task: string; overlap: string; catch_up: string }, now: Date): ScheduleValues {
  const next = nextRunAfter(schedule, now.getTime());
  return [
    schedule.cron,
    schedule.every_seconds,
    schedule.timezone,
    schedule.task,
    schedule.overlap,
    schedule.catch_up,
    schedule.paused,
    dateOf(schedule.start_at),
    dateOf(schedule.end_at),
    next === null ? null : new Date(next),
    now,
  ];
}

const auditedFields = [
  "cron",
  "every_seconds",
  "timezone",
  "task",
  "overlap",
  "catch_up",
  "paused",
  "start_at",
  "end_at",
] as const;
const changedFields = [...auditedFields, "next_run_at"] as const;

/**
 * Schedules (docs/api/schedules.md): every change in one transaction with
 * its event and audit entry, and a notification that wakes every instance's
 * scheduler.
 */
export const schedulesService = {
  async list(db: Database, projectId: string, { agent_id: agentId, after, limit }: ScheduleListInput) {
    if (!(await agentExists(db, projectId, agentId))) throw agentNotFound();
    const cursor = after === undefined ? undefined : decodeCursor(after);
    const rows = cursor
      ? await db.all(scheduleStatements.pageAfter, [agentId, projectId, limit, new Date(cursor.createdAt), cursor.id])
      : await db.all(scheduleStatements.page, [agentId, projectId, limit]);
    const last = rows.at(-1);
    const next = last && rows.length === limit ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null;
    return { items: rows.map(toSchedule), next_cursor: next, total: null } satisfies Page<ScheduleOut>;
  },

  async get(db: Database, projectId: string, agentId: string, id: string): Promise<ScheduleOut> {
    const row =
      isUuid(agentId) && isUuid(id) ? await db.get(scheduleStatements.get, [id, agentId, projectId]) : undefined;
    if (!row) throw await missing(db, projectId, agentId);
    return toSchedule(row);
  },

  async create(
    db: Database,
    config: Config,
    acting: Acting,
    agentId: string,
    input: ScheduleCreateBody,
    answer?: KeptAnswer,
  ): Promise<ScheduleOut> {
    if (!isUuid(agentId)) throw agentNotFound();
    const now = new Date();
    const decided = {
      cron: input.cron ?? null,
      every_seconds: input.every_seconds ?? null,
      timezone: input.timezone ?? "UTC",
      task: templateText(input.task),
      overlap: input.overlap ?? "allow",
      catch_up: input.catch_up ?? "latest",
      paused: input.paused ?? false,
      start_at: input.start_at ? instantOf(input.start_at).toISOString() : null,
      end_at: input.end_at ? instantOf(input.end_at).toISOString() : null,
      created_at: now.toISOString(),
    };
    checkClock(decided, config, now.getTime());
    const id = randomUUID();
    return db.transaction(async (tx) => {
      const row = await tx.get(scheduleStatements.insert, [id, ...valuesOf(decided, now), agentId, acting.projectId]);
      if (!row) throw agentNotFound();
      const schedule = toSchedule(row);
      await recordEvents(tx, acting.projectId, [{ type: "schedule.created", agentId, data: { schedule } }], now);
      await auditService.record(tx, acting, "schedule.created", { type: "schedule", id }, { agent_id: agentId });
      await tx.notify(schedulesChannel);
      await answer?.keep(tx, schedule);
      return schedule;
    });
  },

  /** Changes the given fields and computes next_run_at again from now; cron and every_seconds replace each other. */
  async update(
    db: Database,
    config: Config,
    acting: Acting,
    agentId: string,
    id: string,
    patch: ScheduleUpdateBody,
  ): Promise<ScheduleOut> {
    const { projectId } = acting;
    if (!isUuid(agentId) || !isUuid(id)) throw await missing(db, projectId, agentId);
    return retryLostRaces("Schedule", () =>
      db.transaction(async (tx) => {
        const row = await tx.get(scheduleStatements.lock, [id, agentId, projectId]);
        if (!row) throw await missing(tx, projectId, agentId);
        const before = toSchedule(row);
        const now = nextUpdatedAt(before.updated_at);
        const clockChanged = patch.cron !== undefined || patch.every_seconds !== undefined;
        const decided = {
          cron: clockChanged ? (patch.cron ?? null) : row.cron,
          every_seconds: clockChanged ? (patch.every_seconds ?? null) : row.every_seconds,
          timezone: patch.timezone ?? row.timezone,
          task: patch.task ? templateText(patch.task) : row.task,
          overlap: patch.overlap ?? row.overlap,
          catch_up: patch.catch_up ?? row.catch_up,
          paused: patch.paused ?? row.paused,
          start_at: patch.start_at === undefined ? row.start_at : (dateOf(patch.start_at)?.toISOString() ?? null),
          end_at: patch.end_at === undefined ? row.end_at : (dateOf(patch.end_at)?.toISOString() ?? null),
          created_at: row.created_at,
        };
        checkClock(decided, config, now.getTime());
        const values = valuesOf(decided, now);
        const after = toSchedule({
          ...row,
          ...decided,
          next_run_at: values[9]?.toISOString() ?? null,
        });
        if (!changesOf(before, after, auditedFields)) return before;
        const written = await tx.get(scheduleStatements.update, [id, ...values, agentId, projectId, row.version]);
        if (!written) return lostRace;
        const schedule = toSchedule(written);
        const changes = changesOf(before, schedule, changedFields);
        await recordEvents(tx, projectId, [{ type: "schedule.updated", agentId, data: { schedule, changes } }], now);
        await auditService.record(tx, acting, "schedule.updated", { type: "schedule", id }, { changes });
        await tx.notify(schedulesChannel);
        return schedule;
      }),
    );
  },

  /** Deletes the schedule; the tasks it made stay. */
  async remove(db: Database, acting: Acting, agentId: string, id: string): Promise<void> {
    const { projectId } = acting;
    if (!isUuid(agentId) || !isUuid(id)) throw await missing(db, projectId, agentId);
    await db.transaction(async (tx) => {
      const row = await tx.get(scheduleStatements.delete, [id, agentId, projectId]);
      if (!row) throw await missing(tx, projectId, agentId);
      const schedule = toSchedule(row);
      await recordEvents(tx, projectId, [{ type: "schedule.deleted", agentId, data: { schedule } }]);
      await auditService.record(tx, acting, "schedule.deleted", { type: "schedule", id }, { agent_id: agentId });
    });
  },

  /** Deletes every schedule of an agent being deleted; returns them, for their schedule.deleted events. */
  async removeAllOfAgent(tx: Tx, projectId: string, agentId: string): Promise<ScheduleOut[]> {
    return (await tx.all(scheduleStatements.deleteOfAgent, [agentId, projectId])).map(toSchedule);
  },

  /**
   * A run now: a task from the template, outside the clock (scheduled_for
   * null); next_run_at stays. It is the schedule's previous task for
   * overlap skip. A stopped agent accepts no task (409), as for any task.
   */
  async runNow(db: Database, projectId: string, agentId: string, id: string, answer?: KeptAnswer): Promise<TaskOut> {
    if (!isUuid(agentId) || !isUuid(id)) throw await missing(db, projectId, agentId);
    return db.transaction(async (tx) => {
      const row = await tx.get(scheduleStatements.lock, [id, agentId, projectId]);
      if (!row) throw await missing(tx, projectId, agentId);
      const now = new Date();
      const template = templateOf(row);
      const made = { scheduleId: id, scheduledFor: null, runAt: now, deadlineAt: deadlineOf(template, now.getTime()) };
      const task = await tasksService.createScheduled(tx, projectId, agentId, made, template, now);
      if (!task)
        throw new AppError("conflict", "Agent is stopped and accepts no new tasks", { agent_status: "stopped" });
      await tx.run(scheduleStatements.recordRunNow, [id, task.id]);
      await answer?.keep(tx, task);
      return task;
    });
  },
};

export type { ScheduleRow };
