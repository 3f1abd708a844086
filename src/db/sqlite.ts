import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient as SqliteClient } from "../generated/sqlite/client.js";
import type { Database, PrismaClient, Tx } from "./database.js";
import { Listeners } from "./listeners.js";
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

/**
 * SQLite in WAL mode through three connections: Prisma's, a write connection
 * and a read connection. Every write runs in `transaction()`: BEGIN IMMEDIATE
 * takes the file's write lock first, so processes sharing the file serialise
 * (waiting up to the busy timeout), and this process's transactions queue, so
 * no other request's statement ever runs inside an open one. Reads outside a
 * transaction go to the read connection and never wait behind writes.
 */
class SqliteDatabase implements Database {
  readonly provider = "sqlite";
  readonly inTransaction = false;
  private queue: Promise<unknown> = Promise.resolve();
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
    const result = this.queue.then(() => this.runTransaction(work));
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
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

  private async runTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    await this.begin();
    const tx = new SqliteTx(this.writer);
    try {
      const result = await work(tx);
      this.writer.run(commit, []);
      tx.end();
      for (const [channel, payloads] of tx.notifications) {
        for (const payload of payloads) this.listeners.emit(channel, payload);
      }
      return result;
    } catch (error) {
      tx.end();
      if (this.writer.handle.inTransaction) this.writer.run(rollback, []);
      throw error;
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
    await this.queue;
    this.writer.close();
    this.reader.close();
    await this.prisma.$disconnect();
  }
}

export async function connectSqlite(path: string): Promise<Database> {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
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
