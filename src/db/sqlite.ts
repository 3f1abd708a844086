import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient as SqliteClient } from "../generated/sqlite/client.js";
import type { Database, PrismaClient, Tx } from "./database.js";
import { Listeners } from "./listeners.js";
import { makeFolder } from "./make-folder.js";
import { openSqlite, type SqliteConnection } from "./sqlite-connection.js";
import { type Arg, type Statement, statement } from "./statements.js";

// How often, while someone listens, the file is checked for other processes' commits.
const WATCH_INTERVAL_MS = 50;
// How long a transaction waits for another connection to release the write lock.
const BUSY_TIMEOUT_MS = 5_000;
const LONGEST_PAUSE_MS = 20;

const begin = statement("sqlite_begin_immediate", { sqlite: "BEGIN IMMEDIATE" });
const commit = statement("sqlite_commit", { sqlite: "COMMIT" });
const rollback = statement("sqlite_rollback", { sqlite: "ROLLBACK" });
const savepoint = statement("sqlite_savepoint", { sqlite: "SAVEPOINT one_of_several" });
const release = statement("sqlite_release", { sqlite: "RELEASE one_of_several" });
const rollbackOne = statement("sqlite_rollback_to", { sqlite: "ROLLBACK TO one_of_several" });

// The most queued transactions one commit carries.
const MOST_PER_COMMIT = 64;

const isBusy = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && error.code === "SQLITE_BUSY";

class SqliteTx implements Tx {
  readonly provider = "sqlite";
  private ordinal = 0;
  private open = true;
  readonly notifications = new Map<string, Set<string>>();

  constructor(private readonly connection: SqliteConnection) {}

  private use(): SqliteConnection {
    if (!this.open) throw new Error("The transaction has ended");
    return this.connection;
  }

  async all<Row>(statement: Statement<Row>, args: readonly Arg[]): Promise<Row[]> {
    return this.use().all(statement, args);
  }

  async get<Row>(statement: Statement<Row>, args: readonly Arg[]): Promise<Row | undefined> {
    return this.use().get(statement, args);
  }

  async run(statement: Statement, args: readonly Arg[]): Promise<number> {
    return this.use().run(statement, args);
  }

  reserveOrdinals(count: number): number {
    const first = this.ordinal + 1;
    this.ordinal += count;
    return first;
  }

  async notify(channel: string, payload = ""): Promise<void> {
    this.use();
    const payloads = this.notifications.get(channel) ?? new Set();
    payloads.add(payload);
    this.notifications.set(channel, payloads);
  }

  end(): void {
    this.open = false;
  }
}

interface Waiting {
  work: (tx: Tx) => Promise<unknown>;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * SQLite in WAL mode through three connections: Prisma's, a write connection
 * and a read connection. Every write runs in `transaction()`: BEGIN IMMEDIATE
 * takes the file's write lock first, so processes sharing the file serialise
 * (waiting up to the busy timeout), and this process's transactions queue and
 * run one after another (those that queued together sharing a commit), so no
 * other request's statement ever runs inside an open one. Reads outside a
 * transaction go to the read connection and never wait behind writes.
 */
class SqliteDatabase implements Database {
  readonly provider = "sqlite";
  readonly inTransaction = false;
  /** Transactions waiting for the write connection, in the order they were asked for. */
  private readonly waiting: Waiting[] = [];
  private committing: Promise<void> | undefined;
  private readonly listeners = new Listeners();
  private watch: NodeJS.Timeout | undefined;
  private dataVersion = 0;

  constructor(
    readonly prisma: PrismaClient,
    private readonly writer: SqliteConnection,
    private readonly reader: SqliteConnection,
  ) {}

  // A statement that writes, sent outside a transaction, runs in one of its own.
  async all<Row>(statement: Statement<Row>, args: readonly Arg[]): Promise<Row[]> {
    if (!this.reader.readsOnly(statement)) return this.transaction((tx) => tx.all(statement, args));
    return this.reader.all(statement, args);
  }

  async get<Row>(statement: Statement<Row>, args: readonly Arg[]): Promise<Row | undefined> {
    if (!this.reader.readsOnly(statement)) return this.transaction((tx) => tx.get(statement, args));
    return this.reader.get(statement, args);
  }

  async run(statement: Statement, args: readonly Arg[]): Promise<number> {
    return this.transaction((tx) => tx.run(statement, args));
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (result: unknown) => void, reject });
      this.committing ??= this.commitWaiting();
    });
  }

  /** Runs the waiting transactions, several to a commit, until none waits. */
  private async commitWaiting(): Promise<void> {
    try {
      // Requests that arrived with this one (the same turn of the event loop)
      // queue their transactions first, so that they share its commit.
      await new Promise(setImmediate);
      while (this.waiting.length > 0) {
        const group = this.waiting.splice(0, MOST_PER_COMMIT);
        try {
          await this.runTogether(group);
        } catch (error) {
          // A savepoint, a release or a rollback failed: none of the group is known to
          // have committed. Those already told their outcome are not told again.
          for (const one of group) one.reject(error);
          this.rollBackIfOpen();
        }
      }
    } finally {
      this.committing = undefined;
    }
  }

  private rollBackIfOpen(): void {
    try {
      if (this.writer.handle.inTransaction) this.writer.run(rollback, []);
    } catch {
      // The connection cannot roll back either: the next BEGIN will say why.
    }
  }

  /**
   * Takes the write lock, waiting for another connection that holds it
   * without blocking this process: better-sqlite3's own busy timeout would
   * sleep on the event loop, so a holder in this same process (another
   * connection, Prisma's) could never finish, and nothing else would be served.
   */
  private async begin(): Promise<void> {
    const deadline = Date.now() + BUSY_TIMEOUT_MS;
    for (let pause = 1; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
      try {
        this.writer.run(begin, []);
        return;
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
        await sleep(pause);
      }
    }
  }

  /**
   * Group commit: the transactions that queued while the last commit ran
   * share one BEGIN … COMMIT, each in a savepoint of its own, so one that
   * fails rolls back alone. The commit's cost (writing the pages it changed
   * to the WAL) is then paid once for all of them. Each caller learns its
   * outcome only after the commit, as if its transaction had been alone; if
   * the commit fails, none of them took effect and each gets the error.
   */
  private async runTogether(group: Waiting[]): Promise<void> {
    try {
      await this.begin();
    } catch (error) {
      for (const one of group) one.reject(error);
      return;
    }
    const alone = group.length === 1;
    const outcomes: { one: Waiting; tx: SqliteTx; ok: boolean; value: unknown }[] = [];
    for (const [i, one] of group.entries()) {
      const tx = new SqliteTx(this.writer);
      try {
        if (!alone) this.writer.run(savepoint, []);
        const value = await one.work(tx);
        tx.end();
        if (!alone) this.writer.run(release, []);
        outcomes.push({ one, tx, ok: true, value });
      } catch (error) {
        tx.end();
        outcomes.push({ one, tx, ok: false, value: error });
        if (!this.writer.handle.inTransaction) {
          // SQLite ended the whole transaction (an I/O error, a full disk): what
          // ran before is lost with it, and the rest start again in another.
          for (const done of outcomes) done.one.reject(done.ok ? error : done.value);
          this.waiting.unshift(...group.slice(i + 1));
          return;
        }
        if (!alone) {
          this.writer.run(rollbackOne, []);
          this.writer.run(release, []);
        }
      }
    }
    try {
      if (alone && !outcomes[0]?.ok) this.writer.run(rollback, []);
      else this.writer.run(commit, []);
    } catch (error) {
      this.rollBackIfOpen();
      for (const { one, ok, value } of outcomes) one.reject(ok ? error : value);
      return;
    }
    for (const { one, tx, ok, value } of outcomes) {
      if (!ok) {
        one.reject(value);
        continue;
      }
      one.resolve(value);
      for (const [channel, payloads] of tx.notifications) {
        for (const payload of payloads) this.listeners.emit(channel, payload);
      }
    }
  }

  async notify(channel: string, payload = "", tx?: Tx): Promise<void> {
    if (tx) return tx.notify(channel, payload);
    queueMicrotask(() => this.listeners.emit(channel, payload));
  }

  listen(channel: string, onNotify: (payload: string) => void): () => void {
    const remove = this.listeners.add(channel, onNotify);
    this.watchOtherProcesses();
    return () => {
      remove();
      if (this.listeners.empty) this.stopWatching();
    };
  }

  /**
   * Another process's commit changes the write connection's data_version
   * (this process's own writes do not), which wakes every listener: the other
   * process's in-memory notification cannot reach this one.
   */
  private watchOtherProcesses(): void {
    if (this.watch) return;
    const version = () => this.writer.handle.pragma("data_version", { simple: true }) as bigint;
    this.dataVersion = Number(version());
    this.watch = setInterval(() => {
      const now = Number(version());
      if (now === this.dataVersion) return;
      this.dataVersion = now;
      this.listeners.emitAll();
    }, WATCH_INTERVAL_MS);
    this.watch.unref();
  }

  private stopWatching(): void {
    clearInterval(this.watch);
    this.watch = undefined;
  }

  async close(): Promise<void> {
    this.stopWatching();
    await this.committing;
    this.writer.close();
    this.reader.close();
    await this.prisma.$disconnect();
  }
}

export async function connectSqlite(path: string): Promise<Database> {
  if (path !== ":memory:") makeFolder(dirname(path));
  // WAL with synchronous=NORMAL: durable across process crashes, and writes
  // cost a fraction of the default journal's.
  const writer = openSqlite(path, ["journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON"]);
  // Waiting for the write lock is begin()'s job; once a transaction holds it, nothing else waits.
  writer.handle.pragma("busy_timeout = 0");
  const reader = openSqlite(path, ["query_only = ON"]);
  const prisma = new SqliteClient({ adapter: new PrismaBetterSQLite3({ url: path, timeout: 5000 }) });
  await prisma.$queryRawUnsafe("PRAGMA synchronous = NORMAL");
  await prisma.$queryRawUnsafe("PRAGMA foreign_keys = ON");
  return new SqliteDatabase(prisma, writer, reader);
}
