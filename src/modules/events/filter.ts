import { type EventType, eventTypes } from "./types.js";

/** The largest event id: ids are signed 64-bit integers in both databases. */
const maxEventId = 2n ** 63n - 1n;

/** An event id as clients send it (`after`, `Last-Event-ID`): decimal digits, within 64 bits; else undefined. */
export function parseEventId(text: string): bigint | undefined {
  if (!/^\d{1,19}$/.test(text)) return undefined;
  const id = BigInt(text);
  return id <= maxEventId ? id : undefined;
}

const groups = [...new Set(eventTypes.map((type) => type.slice(0, type.indexOf("."))))];

/**
 * The ways to name event types, in streams' and lists' `types` and in a
 * webhook's: an exact type, `<group>.*` (`agent.*`, `task.*`) for every type
 * of a group, or `*` for every type (webhooks only).
 */
export const typePatterns: readonly string[] = ["*", ...groups.map((group) => `${group}.*`), ...eventTypes];

export const isTypePattern = (pattern: string) => typePatterns.includes(pattern);

/** Whether `type` is named by one of `patterns`: the one matcher of event types. */
export function matchesType(patterns: readonly string[], type: EventType): boolean {
  return patterns.some(
    (pattern) =>
      pattern === "*" || pattern === type || (pattern.endsWith(".*") && type.startsWith(pattern.slice(0, -1))),
  );
}

/**
 * `types` as readers of the log send it, a comma list of exact types and
 * `<group>.*` patterns: the exact types it names, in the catalogue's order,
 * or the names it does not know.
 */
export function parseEventTypes(list: string): { types: EventType[] } | { unknown: string[] } {
  const names = list.split(",").map((part) => part.trim());
  const unknown = names.filter((name) => name === "*" || !isTypePattern(name));
  if (unknown.length > 0) return { unknown };
  return { types: eventTypes.filter((type) => matchesType(names, type)) };
}
