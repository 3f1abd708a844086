import type { Tx } from "../db/index.js";
import type { KeptColumns } from "./sql.js";

/**
 * A creation's Idempotency-Key, as its service sees it: the service keeps
 * its answer with the write that creates it, so the creation and its answer
 * commit together or not at all, and a retry can never create it twice.
 */
export interface KeptAnswer {
  /**
   * Keeps `data` as the request's answer, inside `tx`, the creation's own
   * transaction. Throws `taken()` (which rolls the creation back) when
   * another request holds the key.
   */
  keep(tx: Tx, data: unknown): Promise<void>;
  /**
   * PostgreSQL, for a creation written by one statement: the key's row for
   * the answer `data` made at `now`, which the statement inserts itself
   * (`insertKept`), so that the creation and its key commit in one round trip.
   * Undefined when the key is already held by this request (a claim).
   */
  columns?: (data: unknown, now: Date) => KeptColumns;
  /** What the service throws when its write found the key held by another request: nothing was created. */
  taken(): Error;
}

/** Thrown (through `KeptAnswer.taken`) to undo a creation whose key another request holds. */
export class KeyTaken extends Error {
  constructor() {
    super("The Idempotency-Key is held by another request");
    this.name = "KeyTaken";
  }
}
