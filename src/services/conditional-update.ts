import { AppError } from "../errors.js";

/**
 * Each failed attempt means another request changed the row in between, so
 * ordinary contention settles well within this; a row rewritten even more
 * often is reported as a conflict rather than retried forever.
 */
const maxAttempts = 50;

/**
 * updated_at of a write: now, but always after the value it replaces, so it
 * moves forward even when two writes share a millisecond or the clock steps back.
 */
export const nextUpdatedAt = (previous: Date) => new Date(Math.max(Date.now(), previous.getTime() + 1));

/** The given fields whose value differs from the stored one: only those are written. */
export const changedFields = <Row extends object>(given: Partial<Row>, stored: Row): Partial<Row> =>
  Object.fromEntries(
    Object.entries(given).filter(([key, value]) => value !== undefined && value !== stored[key as keyof Row]),
  ) as Partial<Row>;

export interface ConditionalUpdate<Row extends { updatedAt: Date }, Data> {
  /** The row as it is now; throws when it does not exist. */
  read: () => Promise<Row>;
  /** The columns to change, decided on that row (empty: nothing to write); throws when the change is refused. */
  decide: (row: Row) => Data;
  /**
   * Writes `data` only if the row still has the status and updated_at it was
   * read with, in one statement; returns the written row, or undefined when
   * the row changed meanwhile (or is gone).
   */
  write: (row: Row, data: Data & { updatedAt: Date }) => Promise<Row | undefined>;
  /** Names the resource in the conflict message. */
  what: string;
}

/**
 * Read, decide, write-if-unchanged, and decide again on a fresh read when
 * another request got there first. Every write is therefore a step from the
 * exact state it was decided on: concurrent requests can neither make a
 * transition the table forbids nor silently overwrite each other.
 */
export async function conditionalUpdate<Row extends { updatedAt: Date }, Data extends object>(
  update: ConditionalUpdate<Row, Data>,
): Promise<Row> {
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const row = await update.read();
    const data = update.decide(row);
    if (Object.keys(data).length === 0) return row;
    const written = await update.write(row, { ...data, updatedAt: nextUpdatedAt(row.updatedAt) });
    if (written) return written;
  }
  throw new AppError("conflict", `${update.what} is being changed by other requests; retry the request`);
}
