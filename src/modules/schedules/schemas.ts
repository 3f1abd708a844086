import { z } from "zod";
import { decodeCursor, pageOf } from "../../resources/lists.js";
import {
  atLeastOneOf,
  bodyNumber,
  dateTime,
  pagination,
  resourceId,
  timestamp,
  version,
} from "../../resources/schemas.js";
import { agentId } from "../agents/schemas.js";
import { Task, TaskCreate, taskId } from "../tasks/schemas.js";
import { cronOf, isTimeZone } from "./times.js";

/** docs/api/schedules.md. */
export const scheduleId = resourceId("Schedule id");
export const overlapPolicies = ["allow", "skip"] as const;
export const catchUpPolicies = ["latest", "none"] as const;
export const maxEverySeconds = 31_536_000;
export const maxDeadlineSeconds = 604_800;

const cron = z
  .string()
  .max(200, { message: "must be at most 200 characters" })
  .check((ctx) => {
    try {
      cronOf(ctx.value);
    } catch (error) {
      const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, "") : "";
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        message: `is not a cron expression of five fields${reason ? ` (${reason})` : ""}`,
      });
    }
  })
  .meta({
    description:
      "Five fields: minute hour day-of-month month day-of-week, with `*`, lists, ranges, steps and names; in `timezone`",
    example: "0 9 * * mon-fri",
  });
const everySeconds = bodyNumber(
  z
    .int()
    .min(1)
    .max(maxEverySeconds)
    .meta({ description: `A run every so many seconds: 60–${maxEverySeconds}`, example: 900 }),
);
const timezone = z
  .string()
  .refine(isTimeZone, { message: "must be an IANA time zone name, such as Europe/Berlin" })
  .meta({ description: "IANA time zone name the cron expression is read in; default UTC", example: "Europe/Berlin" });
const overlap = z.enum(overlapPolicies).meta({
  description:
    "allow (default): a run creates its task whatever; skip: no new task while the previous one is not final",
});
const catchUp = z.enum(catchUpPolicies).meta({
  description:
    "latest (default): after downtime, one task for the most recent missed time; none: nothing for missed times",
});
const paused = z
  .boolean()
  .meta({ description: "A paused schedule creates nothing; next_run_at is null", example: false });
const startAt = dateTime.meta({ description: "No run before this time (an interval's first run is at it)" });
const endAt = dateTime.meta({ description: "No run after this time" });

const taskFields = TaskCreate.pick({
  title: true,
  description: true,
  priority: true,
  input: true,
  metadata: true,
  concurrency_key: true,
});
export const TaskTemplate = taskFields
  .extend({
    max_attempts: TaskCreate.shape.max_attempts,
    deadline_seconds: bodyNumber(
      z
        .int()
        .min(1)
        .max(maxDeadlineSeconds)
        .meta({ description: `The task's deadline, 1–${maxDeadlineSeconds} seconds after its run time` }),
    ).optional(),
  })
  .meta({ description: "What each run creates: a task with these fields" });

const createExample = {
  cron: "0 9 * * mon-fri",
  timezone: "Europe/Berlin",
  task: { title: "Morning report", priority: 7, input: { report: "daily" } },
  overlap: "skip",
};

/** Cross-field rules of a schedule's body: exactly one of cron and every_seconds, end_at not before start_at. */
const scheduleRules =
  (creating: boolean) =>
  (ctx: {
    value: { cron?: string; every_seconds?: number; start_at?: string | null; end_at?: string | null };
    issues: z.core.$ZodRawIssue[];
  }) => {
    const { cron, every_seconds, start_at, end_at } = ctx.value;
    if (cron !== undefined && every_seconds !== undefined) {
      ctx.issues.push({ code: "custom", input: cron, path: ["cron"], message: "must not be given with every_seconds" });
    } else if (creating && cron === undefined && every_seconds === undefined) {
      ctx.issues.push({
        code: "custom",
        input: undefined,
        path: ["cron"],
        message: "or every_seconds is required (exactly one of them)",
      });
    }
    if (start_at && end_at && Date.parse(end_at) < Date.parse(start_at)) {
      ctx.issues.push({
        code: "custom",
        input: end_at,
        path: ["end_at"],
        message: "must not be earlier than start_at",
      });
    }
  };

const scheduleFields = {
  cron: cron.optional(),
  every_seconds: everySeconds.optional(),
  timezone: timezone.optional(),
  task: TaskTemplate,
  overlap: overlap.optional(),
  catch_up: catchUp.optional(),
  paused: paused.optional(),
  start_at: startAt.nullable().optional(),
  end_at: endAt.nullable().optional(),
};

export const ScheduleCreateInput = z
  .object({ agent_id: agentId, ...scheduleFields })
  .check(scheduleRules(true))
  .meta({ examples: [createExample, { every_seconds: 900, task: { title: "Sync the inbox" } }] });

export const scheduleUpdateFields = [
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
export const ScheduleUpdateInput = z
  .object({ agent_id: agentId, schedule_id: scheduleId, ...scheduleFields, task: TaskTemplate.optional() })
  .check(atLeastOneOf(scheduleUpdateFields))
  .check(scheduleRules(false))
  .meta({ examples: [{ paused: true }, { cron: "30 8 * * *", timezone: "America/New_York" }] });

export const SchedulePath = z.object({ agent_id: agentId, schedule_id: scheduleId });

const cursor = z
  .string()
  .check((ctx) => {
    if (!decodeCursor(ctx.value)) ctx.issues.push({ code: "custom", input: ctx.value, message: "is not a cursor" });
  })
  .meta({ description: 'Start after this position: the cursor of the Link rel="next" of the previous page' });
export const ScheduleListQuery = z.object({ agent_id: agentId, after: cursor.optional(), limit: pagination.limit });

const templateExample = {
  title: "Morning report",
  description: null,
  priority: 7,
  input: { report: "daily" },
  max_attempts: 1,
  metadata: {},
  deadline_seconds: null,
  concurrency_key: null,
};
const scheduleExample = {
  id: "6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b",
  agent_id: "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69",
  cron: "0 9 * * mon-fri",
  every_seconds: null,
  timezone: "Europe/Berlin",
  task: templateExample,
  overlap: "skip",
  catch_up: "latest",
  paused: false,
  start_at: null,
  end_at: null,
  next_run_at: "2026-11-30T08:00:00.000Z",
  last_run_at: null,
  last_task_id: null,
  created_at: "2026-11-28T13:00:00.000Z",
  updated_at: "2026-11-28T13:00:00.000Z",
  version: 1,
};

export const ScheduleTask = z
  .object({
    title: z.string(),
    description: z.string().nullable(),
    priority: z.int(),
    input: z.record(z.string(), z.unknown()).nullable(),
    max_attempts: z.int(),
    metadata: z.record(z.string(), z.string()),
    deadline_seconds: z.int().nullable(),
    concurrency_key: Task.shape.concurrency_key,
  })
  .meta({ id: "ScheduleTask", description: "The task each run creates", example: templateExample });

export const Schedule = z
  .object({
    id: scheduleId,
    agent_id: agentId,
    cron: z.string().nullable(),
    every_seconds: z.int().nullable(),
    timezone: z.string(),
    task: ScheduleTask,
    overlap: z.enum(overlapPolicies),
    catch_up: z.enum(catchUpPolicies),
    paused: z.boolean(),
    start_at: timestamp.nullable(),
    end_at: timestamp.nullable(),
    next_run_at: timestamp.nullable().meta({
      description: "The next run time; null when paused, past end_at, or when no run time is left",
    }),
    last_run_at: timestamp.nullable().meta({ description: "The run time of the last task it created" }),
    last_task_id: taskId.nullable().meta({ description: "The last task it created (by its clock or a run now)" }),
    created_at: timestamp,
    updated_at: timestamp,
    version,
  })
  .meta({ id: "Schedule", example: scheduleExample });

export const SchedulePage = pageOf(Schedule, "SchedulePage", scheduleExample);

export type ScheduleCreateBody = Omit<z.infer<typeof ScheduleCreateInput>, "agent_id">;
export type ScheduleUpdateBody = Omit<z.infer<typeof ScheduleUpdateInput>, "agent_id" | "schedule_id">;
export type ScheduleListInput = z.infer<typeof ScheduleListQuery>;
export type ScheduleOut = z.infer<typeof Schedule>;
export type ScheduleTaskOut = z.infer<typeof ScheduleTask>;
