import Database from "better-sqlite3";
import pg from "pg";

/**
 * Holds the agents table's write lock from a connection of its own, as
 * another process would: a POST /agents then waits for it inside the
 * service, holding its request slot, until `release()` (or, on SQLite, the
 * service's busy timeout of 5 s). What tests of admission use to keep a
 * request in flight for as long as they need.
 */
export async function holdAgentsWriteLock(url: string): Promise<{ release: () => Promise<void> }> {
  if (url.startsWith("file:")) {
    const connection = new Database(url.replace(/^file:/, ""));
    connection.exec("BEGIN IMMEDIATE");
    return {
      release: async () => {
        connection.exec("ROLLBACK");
        connection.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("BEGIN");
  await client.query("LOCK TABLE agents IN EXCLUSIVE MODE");
  return {
    release: async () => {
      await client.query("ROLLBACK");
      await client.end();
    },
  };
}
