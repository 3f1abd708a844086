import { z } from "zod";
import { text, timestamp } from "../../resources/schemas.js";
import { Agent, agentId } from "../agents/schemas.js";
import { Schedule } from "../schedules/schemas.js";
import { Task, taskId } from "../tasks/schemas.js";
import { parseEventId, parseEventTypes } from "./filter.js";
import { eventTypes } from "./types.js";

const eventIdText = z.string().meta({ description: "An event id: a decimal integer", example: "17179869185" });

/** An event id a client sends: decimal digits within 64 bits. */
export const eventIdParam = (description: string) =>
  z
    .string()
    .check((ctx) => {
      if (parseEventId(ctx.value) === undefined) {
        ctx.issues.push({ code: "custom", input: ctx.value, message: "must be an event id (decimal digits)" });
      }
    })
    .meta({ description, example: "17179869185" });

const typesParam = z
  .string()
  .check((ctx) => {
    const parsed = parseEventTypes(ctx.value);
    if ("unknown" in parsed) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        message: `unknown event types: ${parsed.unknown.join(", ")}`,
      });
    }
  })
  .meta({
    description: `Comma-separated event types; \`task.*\` (or \`agent.*\`, \`schedule.*\`) matches every type it starts. Types: ${eventTypes.join(", ")}`,
    example: "task.*,agent.deleted",
  });

const filters = {
  agent_id: text(1, 100).optional().meta({ description: "Only this agent's events (its tasks' included)" }),
  types: typesParam.optional(),
};

export const defaultPageSize = 100;

export const EventListQuery = z.object({
  after: eventIdParam("Only events after this id (default: from the oldest kept)").optional(),
  limit: z.int().min(1).max(1000).default(defaultPageSize).meta({ description: "Maximum number of events to return" }),
  ...filters,
});

export const EventStreamQuery = z.object({
  after: eventIdParam(
    "Resume after this id: kept events after it are sent first. The Last-Event-ID header wins over it. " +
      "Without either, the stream starts with the next new event.",
  ).optional(),
  ...filters,
});

/** tRPC's httpSubscriptionLink sends the last tracked id it saw as `lastEventId` when it reconnects. */
export const EventSubscriptionInput = EventStreamQuery.extend({
  lastEventId: eventIdParam("The last event id received (set by httpSubscriptionLink when it reconnects)").nullish(),
});

// A pair written as an array of two in the document: `prefixItems` with `items: false`, zod's form of a
// tuple, is valid JSON Schema 2020-12, but Spectral's default rules and Prism's validator refuse it.
const oldAndNew = z.tuple([z.unknown(), z.unknown()]).meta({
  override: ({ jsonSchema }) => {
    delete jsonSchema.prefixItems;
    Object.assign(jsonSchema, { type: "array", items: {}, minItems: 2, maxItems: 2, description: "[old, new]" });
  },
});

const changes = z
  .record(z.string(), oldAndNew)
  .meta({ description: "Updates only: each changed field as [old, new]", example: { status: ["pending", "running"] } });

export const Event = z
  .object({
    id: eventIdText,
    type: z.enum(eventTypes),
    occurred_at: timestamp,
    agent_id: agentId,
    task_id: taskId.nullable(),
    data: z
      .object({
        agent: Agent.optional().meta({
          description: "agent.* events: the agent after the change (before, for a deletion)",
        }),
        task: Task.optional().meta({
          description: "task.* events: the task after the change (before, for a deletion)",
        }),
        schedule: Schedule.optional().meta({
          description: "schedule.* events: the schedule after the change (before, for a deletion)",
        }),
        changes: changes.optional(),
      })
      .meta({ description: "The resource as it is after the change, and the changed fields for updates" }),
  })
  .meta({
    // Never `Event`: a generated client would shadow the DOM's Event type.
    id: "ChangeEvent",
    description: "One change of an agent, a task or a schedule, recorded in the same transaction as the change",
  });

const eventExample = {
  id: "17179869186",
  type: "agent.updated",
  occurred_at: "2026-11-25T22:41:03.456Z",
  agent_id: "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69",
  task_id: null,
  data: {
    agent: {
      id: "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69",
      name: "Research assistant",
      type: "assistant",
      status: "running",
      created_at: "2026-11-25T22:39:57.123Z",
      updated_at: "2026-11-25T22:41:03.456Z",
      version: 2,
      metadata: {},
    },
    changes: { status: ["idle", "running"] },
  },
};

export const EventList = z.array(Event).meta({ example: [eventExample] });

/** The first message of a stream whose resume point was already purged. */
export const EventGap = z
  .object({
    oldest_id: eventIdText.nullable().meta({ description: "The oldest event kept (null when none is)" }),
  })
  // No schema id: the document writes this schema inline in the stream's x-itemSchema, where a
  // $ref to a definitions section of its own would point nowhere.
  .meta({ title: "EventGap" });

export type EventOut = z.infer<typeof Event>;
