import { AppError } from "../errors.js";

/** `{field: [old, new]}` for each field a write changed: an update event's `changes`. */
export type Changes = Record<string, readonly [unknown, unknown]>;

/**
 * Each lost race means another request changed the row in between, so
 * ordinary contention settles well within this; a row rewritten even more
 * often is reported as a conflict rather than retried forever.
 */
const maxAttempts = 50;

/** What an attempt returns when its conditional write found the row changed since it was read. */
export const lostRace = Symbol("lost race");

/**
 * Runs `attempt` (read, decide, write only if the row still has the version
 * it was read with) until it is not overtaken by another request. Every
 * write is therefore a step from the exact state it was decided on:
 * concurrent requests can neither make a transition the lifecycle forbids
 * nor silently overwrite each other.
 */
export async function retryLostRaces<T>(what: string, attempt: () => Promise<T | typeof lostRace>): Promise<T> {
  for (let i = 0; i < maxAttempts; i++) {
    const result = await attempt();
    if (result !== lostRace) return result;
  }
  throw new AppError("conflict", `${what} is being changed by other requests; retry the request`);
}

/**
 * updated_at of a write: now, but always after the value it replaces, so it
 * moves forward even when two writes share a millisecond or the clock steps back.
 */
export const nextUpdatedAt = (previous: string) => new Date(Math.max(Date.now(), Date.parse(previous) + 1));

/**
 * `{field: [old, new]}` for each of `fields` whose value differs between the
 * two (JSON values compare by their text, key order included), or undefined
 * when none does: then there is nothing to write.
 */
export function changesOf<T extends object>(before: T, after: T, fields: readonly (keyof T & string)[]) {
  const changes: Changes = {};
  let changed = false;
  for (const field of fields) {
    const [old, now] = [before[field], after[field]];
    if (old === now || JSON.stringify(old) === JSON.stringify(now)) continue;
    changes[field] = [old, now];
    changed = true;
  }
  return changed ? changes : undefined;
}

/** The entries of `patch` that are set: a field left out of a PATCH keeps its value. */
export const given = <T extends object>(patch: T): Partial<T> =>
  Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as Partial<T>;

/**
 * The versions a conditional write accepts (docs/http.md: If-Match, or
 * expected_version over tRPC); undefined accepts any.
 */
export type VersionCondition = readonly number[] | undefined;

/**
 * Refuses the write, 412, unless the resource's version as read is one the
 * request accepts. The write that follows names that same version in its
 * WHERE, so a change slipped in between makes it match nothing: the attempt
 * is retried and, reading the new version, ends here.
 */
export function requireVersion(what: string, version: number, accepted: VersionCondition): void {
  if (accepted === undefined || accepted.includes(version)) return;
  throw new AppError(
    "precondition_failed",
    `${what} is at version ${version}, not a version the request names`,
    { current_version: version },
    { ETag: `"${version}"` },
  );
}
