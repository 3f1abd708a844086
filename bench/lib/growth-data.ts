// Large tables for the growth table, written straight into the database
// (through the API a million agents would take most of an hour).
import Database from "better-sqlite3";
import { adminQuery, type Provider } from "./databases.js";

const sqlitePath = (url: string) => url.replace(/^file:/, "");
// One millisecond apart from a fixed start: created_at order is insertion order.
const start = Date.parse("2026-01-01T00:00:00.000Z");

/** Adds agents numbered from..to-1 (10% running, like the API seed). */
export async function growAgents(provider: Provider, url: string, from: number, to: number) {
  if (provider === "postgresql") {
    await adminQuery(
      `INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at)
       SELECT gen_random_uuid()::text, '00000000-0000-4000-8000-000000000000', 'agent-' || g, (ARRAY['assistant','worker','supervisor'])[1 + g % 3],
              CASE WHEN g % 10 = 0 THEN 'running' ELSE 'idle' END,
              timestamp '2026-01-01' + g * interval '1 millisecond', timestamp '2026-01-01' + g * interval '1 millisecond'
       FROM generate_series(${from}, ${to - 1}) AS g`,
      url,
    );
    await adminQuery("ANALYZE agents", url);
    return;
  }
  const db = new Database(sqlitePath(url));
  db.pragma("journal_mode = WAL");
  const insert = db.prepare(
    "INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at) VALUES (?, '00000000-0000-4000-8000-000000000000', ?, ?, ?, ?, ?)",
  );
  const types = ["assistant", "worker", "supervisor"];
  db.transaction(() => {
    for (let g = from; g < to; g++) {
      const at = `${new Date(start + g).toISOString().slice(0, 23)}+00:00`;
      insert.run(crypto.randomUUID(), `agent-${g}`, types[g % 3], g % 10 === 0 ? "running" : "idle", at, at);
    }
  })();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}

/** Up to `count` random existing ids. */
export async function sampleIds(provider: Provider, url: string, count: number): Promise<string[]> {
  const sql = `SELECT id FROM agents ORDER BY random() LIMIT ${count}`;
  if (provider === "postgresql") return (await adminQuery(sql, url)).rows.map((row) => row.id as string);
  const db = new Database(sqlitePath(url), { readonly: true });
  const ids = db
    .prepare<[], { id: string }>(sql)
    .all()
    .map((row) => row.id);
  db.close();
  return ids;
}
