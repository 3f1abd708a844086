import type { Changes } from "../../resources/conditional-writes.js";

/** docs/api/events.md: every kind of change the event log records. */
export const eventTypes = [
  "agent.created",
  "agent.updated",
  "agent.deleted",
  "task.created",
  "task.updated",
  "task.deleted",
  "task.leased",
  "task.lease_expired",
  "task.retry_scheduled",
  "task.cancel_requested",
  "schedule.created",
  "schedule.updated",
  "schedule.deleted",
] as const;

export type EventType = (typeof eventTypes)[number];

/** The resource as it is after the change (before it, for a deletion), as the API shows it. */
export type EventData = ({ agent: object } | { task: object } | { schedule: object }) & { changes?: Changes };

/** An event as stored: `data` is the JSON text, so a stream or a webhook can send it without parsing it again. */
export interface EventRecord {
  id: bigint;
  project_id: string;
  type: EventType;
  occurred_at: string;
  agent_id: string;
  task_id: string | null;
  data: string;
}
