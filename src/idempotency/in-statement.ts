import type { KeptColumns } from "./sql.js";

/**
 * An Idempotency-Key whose response is kept by the very statement that
 * creates it (meta `keyInStatement`, PostgreSQL): the service knows its
 * answer before it writes, so it adds `insertKept`'s row to its creating
 * statement. The creation and its key then commit together in one round
 * trip, where a transaction around them takes four (BEGIN, the creation, the
 * key, COMMIT).
 */
export interface KeyInStatement {
  /** The key's row for the answer `data`, made at `now`. */
  columns(data: unknown, now: Date): KeptColumns;
  /** What the service throws when its statement found the key held: nothing was created. */
  taken(): Error;
}
