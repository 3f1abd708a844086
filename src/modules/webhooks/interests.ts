import { matchesType } from "../events/filter.js";
import type { EventType } from "../events/types.js";

/** What a webhook listens to, as the feeder reads it: its types (patterns) and perhaps one agent. */
export interface WebhookInterest {
  id: string;
  projectId: string;
  types: readonly string[];
  agentId: string | null;
}

export const wants = (interest: WebhookInterest, event: { project_id: string; type: EventType; agent_id: string }) =>
  interest.projectId === event.project_id &&
  (interest.agentId === null || interest.agentId === event.agent_id) &&
  matchesType(interest.types, event.type);
