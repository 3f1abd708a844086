import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import pg from "pg";
import { type ChaosDatabase, sqlitePath } from "./databases.js";

/**
 * Tables left out of the digest. Written by a rejected request on purpose: the
 * migration ledger, the rate-limit and login-throttle counters (a refused
 * guess must be counted), kept idempotent responses (a 4xx is kept and
 * replayed too). Written by the service's background webhook sender whenever
 * it gets round to it, so a change there says nothing about the request of
 * the moment: deliveries, their attempts, the event log's read positions.
 * Every other table is data, and a rejected request must leave it untouched.
 */
const bookkeeping = new Set([
  "_prisma_migrations",
  "rate_limits",
  "idempotency_keys",
  "deliveries",
  "delivery_attempts",
  "outbox_cursors",
]);

/** Per table, a digest of its rows (order-independent), read in one snapshot. */
export type Digest = Map<string, string>;

export interface Digester {
  digest(): Promise<Digest>;
  close(): Promise<void>;
}

/** Tables whose digest differs between two snapshots (a table that appeared or went counts too). */
export function changedTables(before: Digest, after: Digest): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => before.get(name) !== after.get(name)).sort();
}

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

const cell = (_key: string, value: unknown) => {
  if (typeof value === "bigint") return value.toString();
  if (Buffer.isBuffer(value)) return value.toString("base64");
  return value;
};

/** Reads the service's database over its own connection, never through the service. */
export async function digester(database: ChaosDatabase): Promise<Digester> {
  if (database.provider === "sqlite") {
    // A connection per digest: one left open makes the service's start-up migration fail with a
    // busy timeout, and the fuzzer restarts the service after a crash.
    const digest = async () => {
      const db = new Database(sqlitePath(database.url), { readonly: true, fileMustExist: true });
      try {
        db.defaultSafeIntegers(true); // a changed 64-bit value must not round to the same number
        return db.transaction(() => {
          const tables = db
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            .pluck()
            .all() as string[];
          const digest: Digest = new Map();
          for (const table of tables.filter((t) => !bookkeeping.has(t))) {
            const rows = db.prepare(`SELECT * FROM "${table}"`).raw().all() as unknown[][];
            digest.set(
              table,
              `${rows.length}:${sha(
                rows
                  .map((row) => JSON.stringify(row, cell))
                  .sort()
                  .join("\n"),
              )}`,
            );
          }
          return digest;
        })();
      } finally {
        db.close();
      }
    };
    return { digest, close: async () => {} };
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const { rows: tables } = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
  );
  // One statement for every table: one snapshot, one round trip.
  const digestSql = tables
    .filter((t) => !bookkeeping.has(t.name))
    .map(
      ({ name }) =>
        `SELECT '${name}' AS name, count(*)::int AS n, coalesce(md5(string_agg(md5(t::text), '' ORDER BY md5(t::text))), '') AS d FROM "${name}" t`,
    )
    .join(" UNION ALL ");
  return {
    digest: async () => {
      const { rows } = await client.query<{ name: string; n: number; d: string }>(digestSql);
      return new Map(rows.map((row) => [row.name, `${row.n}:${row.d}`]));
    },
    close: () => client.end(),
  };
}
