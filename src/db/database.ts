import type { PrismaClient as SqliteClient } from "../generated/sqlite/client.js";
import type { Arg, Statement } from "./statements.js";

export type Provider = "sqlite" | "postgresql";

/**
 * Both generated clients have the same models and methods; code is typed
 * against the SQLite one and works with either.
 */
export type PrismaClient = SqliteClient;

/** Runs prepared statements. */
export interface Queryable {
  readonly provider: Provider;
  /** Every row, keyed by column name. */
  all<Row, Args extends readonly Arg[]>(statement: Statement<Row, Args>, args: Args): Promise<Row[]>;
  /** The first row, or undefined. */
  get<Row, Args extends readonly Arg[]>(statement: Statement<Row, Args>, args: Args): Promise<Row | undefined>;
  /** The number of rows the statement changed. */
  run<Args extends readonly Arg[]>(statement: Statement<unknown, Args>, args: Args): Promise<number>;
}

/** An open transaction: its statements commit together or not at all. */
export interface Tx extends Queryable {
  /**
   * Reserves `count` consecutive numbers of this transaction's sequence
   * (1, 2, …) and returns the first: the ordinals of event ids on PostgreSQL.
   */
  reserveOrdinals(count: number): number;
  /** Wakes the listeners of `channel` on every instance once this transaction commits; never if it rolls back. */
  notify(channel: string, payload?: string): Promise<void>;
}

/**
 * The database of one DATABASE_URL: prepared statements on the hot paths,
 * the Prisma client for the rest, one transaction mechanism, notifications.
 */
export interface Database extends Queryable {
  /** For cold paths (users, the data groups, tests): models and migrations stay Prisma's. */
  readonly prisma: PrismaClient;
  /**
   * Whether this is a transaction's view of the database (`joined`): then a
   * statement does not commit by itself, and `transaction` joins the open one.
   */
  readonly inTransaction: boolean;
  /**
   * Runs `work` in one transaction, committed when it resolves and rolled
   * back when it throws (on SQLite, several queued at once share a commit,
   * each in its own savepoint; the promise settles after that commit).
   * Statements outside `work`'s `tx` do not belong to it, and `work` must not
   * start another transaction (on SQLite that one would wait for this one
   * forever). Never keep a transaction open while waiting
   * for anything but the database: on PostgreSQL it holds back every event
   * reader (src/modules/events/sql.ts), on SQLite every writer.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Wakes the listeners of `channel` on every instance sharing the database:
   * at once, or when `tx` commits. A notification only says "look again":
   * the data always comes from the tables.
   */
  notify(channel: string, payload?: string, tx?: Tx): Promise<void>;
  /**
   * Calls `onNotify` for each notification of `channel`, until the returned
   * function is called. The payload is "" when the sender is unknown (on
   * SQLite, a commit by another process; on PostgreSQL, a reconnection
   * after which anything may have changed).
   */
  listen(channel: string, onNotify: (payload: string) => void): () => void;
  close(): Promise<void>;
}
