// A million agents (and a million tasks) with metadata for scenarios (k) and
// (l) and the list query plans, written straight into the database in batches.
import Database from "better-sqlite3";
import { adminQuery, type Provider } from "./databases.js";

export const defaultListRows = 1_000_000;
/** Tasks carry one of this many concurrency keys (every seventh none): the claim's fair pick walks them. */
export const concurrencyKeys = 100;
/** Agents whose metadata matches (l)'s filter `metadata[tier]=gold`: 1%. */
export const goldEvery = 100;
/** The agents the tasks belong to; the first holds most of them. */
export const taskAgents = 10;

const sqlitePath = (url: string) => url.replace(/^file:/, "");
const start = Date.parse("2026-01-01T00:00:00.000Z");
const tierSql = (g: string) =>
  `CASE WHEN ${g} % ${goldEvery} = 0 THEN 'gold' WHEN ${g} % 2 = 0 THEN 'silver' ELSE 'bronze' END`;

/**
 * `listRows` agents one millisecond apart, 10% running, each with metadata
 * {tier, shard}; `listRows` tasks, 91% on the first agent, with {tier}.
 */
export async function seedLists(provider: Provider, url: string, listRows = defaultListRows): Promise<void> {
  if (provider === "postgresql") {
    const at = "timestamp '2026-01-01' + g * interval '1 millisecond'";
    const statements = [
      `INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at, metadata)
       SELECT md5('agent' || g)::uuid::text, '00000000-0000-4000-8000-000000000000', 'agent-' || g, 'worker', CASE WHEN g % 10 = 0 THEN 'running' ELSE 'idle' END,
              ${at}, ${at}, json_build_object('tier', ${tierSql("g")}, 'shard', (g % 16)::text)::text
       FROM generate_series(0, ${listRows - 1}) AS g`,
      `INSERT INTO agent_metadata (project_id, agent_id, key, value, created_at)
       SELECT a.project_id, a.id, m.key, m.value, a.created_at FROM agents a, json_each_text(a.metadata::json) m`,
      `INSERT INTO tasks (id, project_id, agent_id, title, status, created_at, updated_at, run_at, metadata, concurrency_key)
       SELECT md5('task' || g)::uuid::text, '00000000-0000-4000-8000-000000000000', md5('agent' || CASE WHEN g % 11 = 0 THEN g % ${taskAgents} ELSE 0 END)::uuid::text,
              'task-' || g, CASE WHEN g % 10 = 0 THEN 'running' ELSE 'pending' END, ${at}, ${at}, ${at},
              json_build_object('tier', ${tierSql("g")})::text, CASE WHEN g % 7 = 0 THEN NULL ELSE 'key-' || (g % ${concurrencyKeys}) END
       FROM generate_series(0, ${listRows - 1}) AS g`,
      `INSERT INTO task_metadata (task_id, agent_id, key, value, created_at)
       SELECT t.id, t.agent_id, m.key, m.value, t.created_at FROM tasks t, json_each_text(t.metadata::json) m`,
      "ANALYZE agents",
      "ANALYZE agent_metadata",
      "ANALYZE tasks",
      "ANALYZE task_metadata",
    ];
    for (const sql of statements) await adminQuery(sql, url);
    return;
  }
  const db = new Database(sqlitePath(url));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const agent = db.prepare(
    `INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at, version, metadata)
     VALUES (?, '00000000-0000-4000-8000-000000000000', ?, 'worker', ?, ?, ?, 1, ?)`,
  );
  const agentPair = db.prepare(
    "INSERT INTO agent_metadata (project_id, agent_id, key, value, created_at) VALUES ('00000000-0000-4000-8000-000000000000', ?, ?, ?, ?)",
  );
  const task = db.prepare(
    `INSERT INTO tasks (id, project_id, agent_id, title, status, created_at, updated_at, run_at, metadata, concurrency_key)
     VALUES (?, '00000000-0000-4000-8000-000000000000', ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const taskPair = db.prepare(
    "INSERT INTO task_metadata (task_id, agent_id, key, value, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  const tier = (g: number) => (g % goldEvery === 0 ? "gold" : g % 2 === 0 ? "silver" : "bronze");
  const agentIds: string[] = [];
  const batch = 100_000;
  for (let from = 0; from < listRows; from += batch) {
    db.transaction(() => {
      for (let g = from; g < Math.min(from + batch, listRows); g++) {
        const at = `${new Date(start + g).toISOString().slice(0, 23)}+00:00`;
        const id = crypto.randomUUID();
        if (g < taskAgents) agentIds.push(id);
        const shard = String(g % 16);
        agent.run(
          id,
          `agent-${g}`,
          g % 10 === 0 ? "running" : "idle",
          at,
          at,
          JSON.stringify({ tier: tier(g), shard }),
        );
        agentPair.run(id, "tier", tier(g), at);
        agentPair.run(id, "shard", shard, at);
        const taskId = crypto.randomUUID();
        const owner = agentIds[g % 11 === 0 ? g % taskAgents : 0] as string;
        const key = g % 7 === 0 ? null : `key-${g % concurrencyKeys}`;
        const status = g % 10 === 0 ? "running" : "pending";
        task.run(taskId, owner, `task-${g}`, status, at, at, at, `{"tier":"${tier(g)}"}`, key);
        taskPair.run(taskId, owner, "tier", tier(g), at);
      }
    })();
  }
  db.exec("ANALYZE");
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}

/** The agent holding most tasks, and the (created_at, id) `depth` rows into the agents' list. */
export async function listLandmarks(provider: Provider, url: string, depth: number) {
  const deep = `SELECT created_at, id FROM agents ORDER BY created_at, id LIMIT 1 OFFSET ${depth}`;
  const busiest = "SELECT agent_id FROM tasks GROUP BY agent_id ORDER BY COUNT(*) DESC LIMIT 1";
  if (provider === "postgresql") {
    const iso = `SELECT to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at, id FROM (${deep}) d`;
    const row = (await adminQuery(iso, url)).rows[0] as { created_at: string; id: string };
    const owner = (await adminQuery(busiest, url)).rows[0] as { agent_id: string };
    return { deep: { createdAt: row.created_at, id: row.id }, taskAgent: owner.agent_id };
  }
  const db = new Database(sqlitePath(url), { readonly: true });
  const row = db.prepare<[], { created_at: string; id: string }>(deep).get();
  const owner = db.prepare<[], { agent_id: string }>(busiest).get();
  db.close();
  if (!row || !owner) throw new Error("the list data is missing");
  return { deep: { createdAt: `${row.created_at.slice(0, 23)}Z`, id: row.id }, taskAgent: owner.agent_id };
}
