import type { EventOut } from "./schemas.js";
import type { EventRecord } from "./types.js";

/** An event as the API shows it (docs/api/events.md). */
export const eventOut = (event: EventRecord): EventOut => ({
  id: String(event.id),
  type: event.type,
  occurred_at: event.occurred_at,
  agent_id: event.agent_id,
  task_id: event.task_id,
  data: JSON.parse(event.data),
});

/** The same as JSON text, without parsing the stored `data` again: what a stream sends for each event. */
export const eventJson = (event: EventRecord): string =>
  `{"id":"${event.id}","type":${JSON.stringify(event.type)},"occurred_at":${JSON.stringify(event.occurred_at)},` +
  `"agent_id":${JSON.stringify(event.agent_id)},"task_id":${JSON.stringify(event.task_id)},"data":${event.data}}`;
