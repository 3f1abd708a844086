import { type EventType, eventTypes } from "../events/types.js";

/**
 * A webhook's `types`: exact event types, `*` for every type, or `<group>.*`
 * (`agent.*`, `task.*`) for every type of a group. Anything else names no
 * event and is refused when the webhook is written.
 */
const groups = [...new Set(eventTypes.map((type) => type.slice(0, type.indexOf("."))))];
export const typePatterns: readonly string[] = ["*", ...groups.map((group) => `${group}.*`), ...eventTypes];

export const isTypePattern = (pattern: string) => typePatterns.includes(pattern);

export function matchesType(patterns: readonly string[], type: EventType): boolean {
  return patterns.some(
    (pattern) =>
      pattern === "*" || pattern === type || (pattern.endsWith(".*") && type.startsWith(pattern.slice(0, -1))),
  );
}

/** What a webhook listens to, as the feeder reads it. */
export interface Subscription {
  id: string;
  types: readonly string[];
  agentId: string | null;
}

export const wants = (subscription: Subscription, event: { type: EventType; agent_id: string }) =>
  (subscription.agentId === null || subscription.agentId === event.agent_id) &&
  matchesType(subscription.types, event.type);
