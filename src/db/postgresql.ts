import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient as PostgresClient } from "../generated/postgresql/client.js";
import { CONNECT_TIMEOUT_MS } from "./connect-timeout.js";
import type { Database, PrismaClient, Tx } from "./database.js";
import { Listeners } from "./listeners.js";
import { PostgresListener } from "./postgresql-listener.js";
import { type Arg, type Statement, statement, textFor } from "./statements.js";
import { DatabaseUnavailableError } from "./unavailable.js";
import { isoFromPostgres, postgresArg } from "./values.js";

const TIMESTAMP = 1114;
const TIMESTAMPTZ = 1184;
const INT8 = 20;

/** Value types as on SQLite (src/db/statements.ts): ISO timestamps, bigint BIGINTs. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === TIMESTAMP) return isoFromPostgres;
    if (oid === TIMESTAMPTZ) return (text: string) => new Date(text).toISOString();
    if (oid === INT8) return BigInt;
    return pg.types.getTypeParser(oid, format ?? "text");
  },
} as pg.CustomTypesConfig;

const notifyStatement = statement<unknown, [channel: string, payload: string]>("pg_notify", {
  postgresql: "SELECT pg_notify($1, $2)",
});

// Failures of the connection rather than of the statement, which pg reports without a SQLSTATE.
const connectionFailure =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended)/i;

const classify = (error: unknown) =>
  error instanceof Error && !(error instanceof pg.DatabaseError) && connectionFailure.test(error.message)
    ? new DatabaseUnavailableError(error)
    : error;

type Executor = pg.Pool | pg.PoolClient;

async function query<Row>(executor: Executor, statement: Statement<Row>, args: readonly Arg[]) {
  try {
    return await executor.query<Row & pg.QueryResultRow>({
      name: statement.name,
      text: textFor(statement, "postgresql"),
      values: args.map(postgresArg),
      types,
    });
  } catch (error) {
    throw classify(error);
  }
}

class PostgresTx implements Tx {
  readonly provider = "postgresql";
  private ordinal = 0;
  private open = true;

  constructor(private readonly client: pg.PoolClient) {}

  private use(): pg.PoolClient {
    if (!this.open) throw new Error("The transaction has ended");
    return this.client;
  }

  async all<Row>(statement: Statement<Row>, args: readonly Arg[]): Promise<Row[]> {
    return (await query(this.use(), statement, args)).rows;
  }

  async get<Row>(statement: Statement<Row>, args: readonly Arg[]): Promise<Row | undefined> {
    return (await query(this.use(), statement, args)).rows[0];
  }

  async run(statement: Statement, args: readonly Arg[]): Promise<number> {
    return (await query(this.use(), statement, args)).rowCount ?? 0;
  }

  reserveOrdinals(count: number): number {
    const first = this.ordinal + 1;
    this.ordinal += count;
    return first;
  }

  // PostgreSQL delivers a NOTIFY sent inside a transaction when it commits.
  async notify(channel: string, payload = ""): Promise<void> {
    await query(this.use(), notifyStatement, [channel, payload]);
  }

  end(): void {
    this.open = false;
  }
}

/**
 * PostgreSQL through one pg.Pool, shared with Prisma's adapter. Statements
 * are named, so each connection of the pool parses and plans one only once.
 */
class PostgresDatabase implements Database {
  readonly provider = "postgresql";
  readonly inTransaction = false;
  private readonly listeners = new Listeners();
  private readonly listener: PostgresListener;

  constructor(
    readonly prisma: PrismaClient,
    private readonly pool: pg.Pool,
    connectionString: string,
  ) {
    this.listener = new PostgresListener(connectionString, this.listeners);
  }

  async all<Row>(statement: Statement<Row>, args: readonly Arg[]): Promise<Row[]> {
    return (await query(this.pool, statement, args)).rows;
  }

  async get<Row>(statement: Statement<Row>, args: readonly Arg[]): Promise<Row | undefined> {
    return (await query(this.pool, statement, args)).rows[0];
  }

  async run(statement: Statement, args: readonly Arg[]): Promise<number> {
    return (await query(this.pool, statement, args)).rowCount ?? 0;
  }

  async transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw classify(error);
    }
    const tx = new PostgresTx(client);
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      const result = await work(tx);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      // A connection that cannot even roll back is dropped from the pool.
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw classify(error);
    } finally {
      tx.end();
      client.release(broken);
    }
  }

  async notify(channel: string, payload = "", tx?: Tx): Promise<void> {
    if (tx) return tx.notify(channel, payload);
    await query(this.pool, notifyStatement, [channel, payload]);
  }

  listen(channel: string, onNotify: (payload: string) => void): () => void {
    return this.listeners.add(channel, onNotify, {
      onFirst: () => this.listener.listen(channel),
      onLast: () => this.listener.unlisten(channel),
    });
  }

  async close(): Promise<void> {
    await this.listener.close();
    await this.prisma.$disconnect();
    await this.pool.end();
  }
}

export function connectPostgres(connectionString: string): Database {
  const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle connection the server closed is dropped by the pool; without a
  // listener the error would end the process.
  pool.on("error", () => {});
  // The pool listens for errors only on the connections it holds idle. One that the server ends while it is
  // lent out (a transaction between two statements; a dropped database while shutting down) would emit
  // 'error' with no query to fail it and, with no listener, end the process. Its next statement fails
  // instead (DatabaseUnavailableError), and the pool drops it when it comes back.
  pool.on("connect", (client) => client.on("error", () => {}));
  const prisma = new PostgresClient({ adapter: new PrismaPg(pool) }) as unknown as PrismaClient;
  return new PostgresDatabase(prisma, pool, connectionString);
}
