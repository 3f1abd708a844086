import { type EventType, eventTypes } from "./types.js";

/** The largest event id: ids are signed 64-bit integers in both databases. */
const maxEventId = 2n ** 63n - 1n;

/** An event id as clients send it (`after`, `Last-Event-ID`): decimal digits, within 64 bits; else undefined. */
export function parseEventId(text: string): bigint | undefined {
  if (!/^\d{1,19}$/.test(text)) return undefined;
  const id = BigInt(text);
  return id <= maxEventId ? id : undefined;
}

const prefixes = new Set(eventTypes.map((type) => type.slice(0, type.indexOf("."))));

/**
 * `types` as clients send it, a comma list of event types where `task.*`
 * stands for every type that starts with `task.`: the exact types it names,
 * in the catalogue's order, or the names it does not know.
 */
export function parseEventTypes(list: string): { types: EventType[] } | { unknown: string[] } {
  const wanted = new Set<EventType>();
  const unknown: string[] = [];
  for (const name of list.split(",").map((part) => part.trim())) {
    if (name.endsWith(".*") && prefixes.has(name.slice(0, -2))) {
      for (const type of eventTypes) if (type.startsWith(name.slice(0, -1))) wanted.add(type);
    } else if ((eventTypes as readonly string[]).includes(name)) {
      wanted.add(name as EventType);
    } else {
      unknown.push(name);
    }
  }
  if (unknown.length > 0) return { unknown };
  return { types: eventTypes.filter((type) => wanted.has(type)) };
}
