import { z } from "zod";
import { expectedVersion } from "../../resources/expected-version.js";
import { jsonObject, jsonValue, maxInputBytes, serialisedBytes } from "../../resources/json.js";
import { cursorOrSkip, listFields, pageOf } from "../../resources/lists.js";
import { metadataInput, metadataPatch } from "../../resources/metadata.js";
import {
  atLeastOneOf,
  bodyNumber,
  dateTime,
  metadata,
  resourceId,
  text,
  timestamp,
  uuidPattern,
  version,
} from "../../resources/schemas.js";
import { agentId } from "../agents/schemas.js";

export const taskStatuses = ["pending", "running", "succeeded", "failed", "cancelled"] as const;

export const taskId = resourceId("Task id");
export const taskStatus = z.enum(taskStatuses).meta({ description: "Lifecycle state" });
const title = text(1, 200).meta({ description: "1–200 characters", example: "Summarise the weekly report" });
const description = text(0, 10_000).nullable().meta({ description: "Up to 10,000 characters" });
const priority = z.int().min(0).max(9).meta({ description: "0–9, 9 is the most urgent", example: 5 });
const priorityInput = bodyNumber(priority);
const input = jsonObject(maxInputBytes)
  .nullable()
  .meta({ description: `Any JSON object, at most ${maxInputBytes} bytes serialised (UTF-8)` });
const result = jsonValue.meta({ description: "Any JSON value; null until set" });

// Running tasks (docs/api/leases.md): when a task may run, how often, until when; and a
// worker finishing it through its lease. Cross-field rules that need the
// stored task (deadline_at against run_at) are the service's.
const maxAttempts = z.int().min(1).max(20).meta({ description: "Attempts allowed before the task fails", example: 3 });
const schedulingFields = {
  max_attempts: bodyNumber(maxAttempts).optional(),
  run_at: dateTime.optional().meta({ description: "Not leasable before this time; default: now" }),
  deadline_at: dateTime
    .nullable()
    .optional()
    .meta({ description: "The task fails if it is not final by then; not before run_at; null: none" }),
};
/** A worker's report of a failure: stored as the task's `error`. */
export const TaskErrorInput = z.object({
  code: text(1, 100).meta({ example: "upstream_timeout" }),
  message: text(1, 10_000).meta({ example: "The crawler timed out after 30 s" }),
  details: jsonValue
    .check((ctx) => {
      if (serialisedBytes(ctx.value) > maxInputBytes) {
        ctx.issues.push({
          code: "custom",
          input: ctx.value,
          message: `must be at most ${maxInputBytes} bytes serialised`,
        });
      }
    })
    .optional()
    .meta({ description: "Any JSON value, or null (the default)" }),
});
const finishingFields = {
  lease_id: z
    .string()
    .regex(uuidPattern, "must be a UUID")
    .optional()
    .meta({ description: "The worker's live lease: needed to change the status of a leased task", format: "uuid" }),
  error: TaskErrorInput.optional().meta({ description: "With status failed: what went wrong" }),
  retry: z.boolean().optional().meta({
    description: "With lease_id and status failed: false never retries (default: retry while attempts remain)",
  }),
};
/** `error` only describes a failure; `retry` only a worker's failure. */
const finishingRules = (ctx: { value: Record<string, unknown>; issues: z.core.$ZodRawIssue[] }) => {
  const { status, error, retry, lease_id } = ctx.value;
  if (error !== undefined && status !== "failed") {
    ctx.issues.push({
      code: "custom",
      input: error,
      path: ["error"],
      message: 'is only accepted with status "failed"',
    });
  }
  if (retry !== undefined && (status !== "failed" || lease_id === undefined)) {
    ctx.issues.push({
      code: "custom",
      input: retry,
      path: ["retry"],
      message: 'is only accepted with status "failed" and lease_id',
    });
  }
};

export const TaskCreate = z.object({
  title,
  description: description.optional(),
  priority: priorityInput.default(5),
  input: input.optional(),
  ...schedulingFields,
  metadata: metadataInput.optional(),
});

export const taskUpdateFields = [
  "title",
  "description",
  "priority",
  "status",
  "result",
  "max_attempts",
  "run_at",
  "deadline_at",
  "lease_id",
  "metadata",
] as const;
const TaskUpdate = z.object({
  title: title.optional(),
  description: description.optional(),
  priority: priorityInput.optional(),
  status: taskStatus.optional(),
  result: result.optional(),
  ...schedulingFields,
  ...finishingFields,
  metadata: metadataPatch.optional(),
});

// trpc-to-openapi keeps only `examples` of an input's meta: request examples go there.
export const TaskCreateInput = TaskCreate.extend({ agent_id: agentId }).meta({
  examples: [{ title: "Summarise the weekly report", priority: 7, input: { url: "https://example.com/report.pdf" } }],
});
export const TaskUpdateInput = TaskUpdate.extend({ agent_id: agentId, task_id: taskId, ...expectedVersion })
  .check(atLeastOneOf(taskUpdateFields))
  .check(finishingRules)
  .meta({
    // The first is what tools send as a first call on a new (pending) task: it must be accepted there.
    examples: [
      { priority: 7, description: "Include the regional breakdown" },
      { status: "succeeded", result: { summary: "Revenue up 4%" } },
      {
        lease_id: "0c3e8a2f-5b7d-4f1e-9a2c-6d8b4e0f1a37",
        status: "failed",
        error: { code: "upstream_timeout", message: "The crawler timed out after 30 s", details: null },
        retry: true,
      },
    ],
  });
export const TaskPath = z.object({ agent_id: agentId, task_id: taskId });
export const TaskDeleteInput = TaskPath.extend(expectedVersion);
export const TaskListQuery = z
  .object({
    agent_id: agentId,
    ...listFields,
    status: taskStatus.optional().meta({ description: "Only tasks in this state" }),
  })
  .check(cursorOrSkip);

const taskExample = {
  id: "9d0f3b6e-2c4a-4e8f-b1d7-5a6c7e8f9012",
  agent_id: "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69",
  title: "Summarise the weekly report",
  description: null,
  priority: 5,
  status: "pending",
  input: { url: "https://example.com/report.pdf" },
  result: null,
  created_at: "2026-11-25T22:39:57.123Z",
  updated_at: "2026-11-25T22:39:57.123Z",
  max_attempts: 1,
  attempts: 0,
  run_at: "2026-11-25T22:39:57.123Z",
  deadline_at: null,
  lease: null,
  cancel_requested: false,
  error: null,
  version: 1,
  metadata: {},
  schedule_id: null,
  scheduled_for: null,
};

/** The live lease of a task (docs/api/tasks.md). */
export const TaskLease = z
  .object({
    id: resourceId("Lease id"),
    worker: z.string().nullable().meta({ description: "The worker's name, if it gave one", example: "worker-1" }),
    expires_at: timestamp,
  })
  .meta({
    id: "TaskLease",
    description: "The live lease on the task",
    example: { id: "0c3e8a2f-5b7d-4f1e-9a2c-6d8b4e0f1a37", worker: "worker-1", expires_at: "2026-11-25T22:40:57.123Z" },
  });

/** A task's last failure (docs/api/tasks.md). */
export const TaskError = z
  .object({
    code: z.string().meta({ example: "lease_expired" }),
    message: z.string().meta({ example: "The worker's lease expired before the task finished" }),
    details: jsonValue.meta({ description: "Any JSON value, or null" }),
  })
  .meta({
    id: "TaskError",
    description: "The last failure",
    example: { code: "lease_expired", message: "The worker's lease expired before the task finished", details: null },
  });

export const Task = z
  .object({
    id: taskId,
    agent_id: agentId,
    title: z.string(),
    description: z.string().nullable(),
    priority,
    status: taskStatus,
    input: input,
    result: result,
    created_at: timestamp,
    updated_at: timestamp,
    max_attempts: maxAttempts,
    attempts: z.int().min(0).meta({ description: "Attempts that ended by failure or by an expired lease", example: 0 }),
    run_at: timestamp.meta({ description: "Not leasable before this time" }),
    deadline_at: timestamp.nullable().meta({ description: "The task fails if it is not final by then", example: null }),
    lease: TaskLease.nullable(),
    cancel_requested: z
      .boolean()
      .meta({ description: "A cancellation was asked for while the task was leased", example: false }),
    error: TaskError.nullable(),
    version,
    metadata,
    schedule_id: z
      .string()
      .nullable()
      .meta({ description: "The schedule that created it (docs/api/schedules.md); null otherwise", example: null }),
    scheduled_for: timestamp.nullable().meta({
      description: "The run time of its schedule it was created for; null otherwise (and for a run now)",
      example: null,
    }),
  })
  .meta({
    id: "Task",
    example: taskExample,
  });

export type TaskStatus = (typeof taskStatuses)[number];
export type TaskCreateBody = Omit<z.infer<typeof TaskCreateInput>, "agent_id">;
export type TaskUpdateBody = Omit<z.infer<typeof TaskUpdateInput>, "agent_id" | "task_id" | "expected_version">;
export type TaskListInput = z.infer<typeof TaskListQuery>;
export type TaskOut = z.infer<typeof Task>;

/** A page of tasks: the REST list's body, its Link cursor and its X-Total-Count. */
export const TaskPage = pageOf(Task, "TaskPage", taskExample);
