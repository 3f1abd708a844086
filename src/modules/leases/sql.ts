import { statement } from "../../db/index.js";
import { type TaskRow, taskColumns, toTask } from "../tasks/rows.js";
import type { LeaseOut } from "./schemas.js";

/** The Lease response of a row that holds one. */
export function toLease(row: TaskRow): LeaseOut {
  if (row.lease_id === null || row.lease_created_at === null || row.lease_expires_at === null) {
    throw new Error(`Task ${row.id} holds no lease`);
  }
  return {
    id: row.lease_id,
    agent_id: row.agent_id,
    task_id: row.id,
    worker: row.lease_worker,
    created_at: row.lease_created_at,
    expires_at: row.lease_expires_at,
    task: toTask(row),
  };
}

// A ready task: pending, its run_at come, its deadline (if any) still ahead (the settler fails the others).
const ready = (alias: string) => `${alias}.status = 'pending' AND ${alias}.run_at <= $2
    AND (${alias}.deadline_at IS NULL OR ${alias}.deadline_at > $2)`;
const pickOrder = (alias: string) => `${alias}.priority DESC, ${alias}.run_at, ${alias}.created_at, ${alias}.id`;

// The index of an agent's tasks by status and concurrency key, in pick order within a key. Its name on
// SQLite (PostgreSQL shortens it, and needs no naming of it).
const byKeyIndex = "tasks_agent_id_status_concurrency_key_priority_run_at_created_at_id_idx";
const nextIndex = "tasks_agent_id_status_priority_run_at_created_at_id_idx";
const indexed = (index: string) => ({ sqlite: ` INDEXED BY ${index}`, postgresql: "" });

/**
 * The head of every concurrency key of the agent: for each key that has a
 * ready task, its first in pick order (docs/api/leases.md). The keys are
 * walked as a loose index scan of the (agent_id, status, concurrency_key, …)
 * index, one seek per key; each key's head is one more seek into the same
 * index; tasks without a key form one key of their own (NULL).
 */
function headsSql(provider: "sqlite" | "postgresql") {
  const by = indexed(byKeyIndex)[provider];
  const pending = "agent_id = $1 AND project_id = $3 AND status = 'pending'";
  // Ordered as the index is (the key is fixed), so the walk is of that key's rows only, also for the NULL key.
  const head = (columns: string, keyCondition: string) => `SELECT ${columns} FROM tasks t${by}
      WHERE t.agent_id = $1 AND t.project_id = $3 AND ${keyCondition} AND ${ready("t")}
      ORDER BY t.concurrency_key, ${pickOrder("t")} LIMIT 1`;
  const headColumns = "t.id, t.concurrency_key, t.priority, t.run_at, t.created_at";
  const keys = `WITH RECURSIVE keys(k) AS (
      SELECT (SELECT concurrency_key FROM tasks${by} WHERE ${pending} AND concurrency_key IS NOT NULL
              ORDER BY concurrency_key LIMIT 1)
      UNION ALL
      SELECT (SELECT concurrency_key FROM tasks${by} WHERE ${pending} AND concurrency_key > keys.k
              ORDER BY concurrency_key LIMIT 1)
      FROM keys WHERE keys.k IS NOT NULL)`;
  if (provider === "postgresql") {
    // Each head read whole by its own seek (LATERAL): joining the heads' ids back to tasks was planned as a
    // hash join over a scan of every task (2.3 of the statement's 4.3 ms at 10,000 tasks; 0.7 ms now).
    return `${keys}
      SELECT h.* FROM keys CROSS JOIN LATERAL (${head(headColumns, "t.concurrency_key = keys.k")}) h
      WHERE keys.k IS NOT NULL
      UNION ALL (${head(headColumns, "t.concurrency_key IS NULL")})`;
  }
  // SQLite has no LATERAL: each head's id, then its row.
  return `${keys},
    heads(id) AS (
      SELECT (${head("t.id", "t.concurrency_key = keys.k")}) FROM keys WHERE keys.k IS NOT NULL
      UNION ALL SELECT (${head("t.id", "t.concurrency_key IS NULL")}))
    SELECT h.id, h.concurrency_key, h.priority, h.run_at, h.created_at
    FROM heads JOIN tasks h ON h.id = heads.id`;
}

function agentWithRunningSql(provider: "sqlite" | "postgresql") {
  const by = indexed(byKeyIndex)[provider];
  const running = "agent_id = $1 AND project_id = $2 AND status = 'running'";
  return `WITH RECURSIVE keys(k) AS (
      SELECT (SELECT concurrency_key FROM tasks${by} WHERE ${running} AND concurrency_key IS NOT NULL
              ORDER BY concurrency_key LIMIT 1)
      UNION ALL
      SELECT (SELECT concurrency_key FROM tasks${by} WHERE ${running} AND concurrency_key > keys.k
              ORDER BY concurrency_key LIMIT 1)
      FROM keys WHERE keys.k IS NOT NULL),
    counts(concurrency_key, running) AS (
      SELECT k, (SELECT COUNT(*) FROM tasks${by} WHERE ${running} AND concurrency_key = keys.k)
      FROM keys WHERE k IS NOT NULL
      UNION ALL
      SELECT NULL, (SELECT COUNT(*) FROM tasks${by} WHERE ${running} AND concurrency_key IS NULL))
    SELECT a.status, a.max_running, a.max_running_per_key, counts.concurrency_key, counts.running
    FROM agents a CROSS JOIN counts WHERE a.id = $1 AND a.project_id = $2`;
}

const limitsSet = "(max_running IS NOT NULL OR max_running_per_key IS NOT NULL)";

// The lease, capped at the task's deadline; updated_at moves forward by at least 1 ms, as every write's does.
const leaseColumns = `status = 'running', lease_id = $3, lease_worker = $4, lease_created_at = $2,
    lease_expires_at = CASE WHEN deadline_at IS NOT NULL AND deadline_at < $5 THEN deadline_at ELSE $5 END,
    lease_duration_seconds = $6,
    version = version + 1`;

/**
 * On PostgreSQL, claims of an agent without limits run at once and all pick
 * the same head: the claim takes the first ready task of the head's key that
 * no other claim has locked (the head itself, unless a claim is taking it).
 * Claiming the head by its id made every other claim wait for the first to
 * commit, then find it taken and pick again: one lease per commit, and 32
 * claims at once cost 10 times a PATCH each. Under the exclusive lock of an
 * agent with limits nothing is skipped, so the head is what is taken.
 */
const headKey = "(SELECT h.concurrency_key FROM tasks h WHERE h.id = $8)";
const firstUnlocked = (keyCondition: string) => `(SELECT t.id FROM tasks t
      WHERE t.agent_id = $1 AND t.project_id = $7 AND ${keyCondition} AND ${ready("t")}
      ORDER BY t.concurrency_key, ${pickOrder("t")} LIMIT 1 FOR UPDATE SKIP LOCKED)`;

/** A key's head, as the pick compares it. */
export interface HeadRow {
  id: string;
  concurrency_key: string | null;
  priority: number;
  run_at: string;
  created_at: string;
}

/** An agent's limits and status, as the claim reads them. */
export interface ClaimAgentRow {
  status: string;
  max_running: number | null;
  max_running_per_key: number | null;
}

/** A running agent a pool lease may serve, with when its next task is or becomes ready. */
export interface PoolAgentRow {
  id: string;
  top_priority: number | null;
  next_run_at: string | null;
}

/**
 * How a pool lease selects its agents (docs/api/leases.md): `$3` is the
 * selector's value, as JSON text for a list or pairs; for metadata, `$4` and
 * `$5` its first pair.
 */
export type PoolSelectorKind = "all" | "ids" | "type" | "metadata";

// The selector's agents: the project's running ones (all of them, of the listed ids, of a type, or with
// every metadata pair), each with its top ready priority and its next run_at, in turn order: the one whose
// task a pool lease took longest ago (or never) first. One statement per kind of selector, so each is planned
// for what it narrows by: the listed ids by primary key, metadata by its first pair's index range, a type
// (or no selector) within the project's running agents.
function poolAgentsSql(provider: "sqlite" | "postgresql", kind: PoolSelectorKind) {
  const pairs = provider === "sqlite" ? "json_each($3) j" : "jsonb_each_text($3::jsonb) j";
  // The listed ids drive the join (each one primary-key lookup); the other kinds range over the project's
  // running agents (agents_project_id_status_created_at_id_idx).
  // A metadata selector: the first pair ($4, $5) drives, through the pairs' (project_id, key, value, …) index.
  const from = {
    all: "agents a",
    type: "agents a",
    ids:
      provider === "sqlite"
        ? "json_each($3) AS listed CROSS JOIN agents a ON a.id = listed.value"
        : "jsonb_array_elements_text($3::jsonb) AS listed(id) JOIN agents a ON a.id = listed.id",
    metadata: `agent_metadata f${indexed("agent_metadata_project_id_key_value_created_at_agent_id_idx")[provider]}
      ${provider === "sqlite" ? "CROSS JOIN" : "JOIN"} agents a ON a.id = f.agent_id AND f.project_id = $1 AND f.key = $4 AND f.value = $5`,
  }[kind];
  const narrow = {
    all: "",
    ids: "",
    type: " AND a.type = $3",
    metadata: ` AND NOT EXISTS (SELECT 1 FROM ${pairs} WHERE NOT EXISTS (
        SELECT 1 FROM agent_metadata m WHERE m.agent_id = a.id AND m.key = j.key AND m.value = j.value))`,
  }[kind];
  return `SELECT a.id,
      (SELECT t.priority FROM tasks t${indexed(nextIndex)[provider]}
        WHERE t.agent_id = a.id AND t.project_id = $1 AND ${ready("t")}
        ORDER BY ${pickOrder("t")} LIMIT 1) AS top_priority,
      (SELECT t.run_at FROM tasks t WHERE t.agent_id = a.id AND t.project_id = $1 AND t.status = 'pending'
        AND (t.deadline_at IS NULL OR t.deadline_at > $2) ORDER BY t.run_at LIMIT 1) AS next_run_at
    FROM ${from}
    WHERE a.project_id = $1 AND a.status = 'running'${narrow}
    ORDER BY a.last_leased_at IS NOT NULL, a.last_leased_at, a.id`;
}

const poolAgents = (kind: PoolSelectorKind) =>
  statement<PoolAgentRow, [projectId: string, now: Date, ...selector: string[]]>(`leases_pool_agents_${kind}`, {
    sqlite: poolAgentsSql("sqlite", kind),
    postgresql: poolAgentsSql("postgresql", kind),
  });

export const leaseStatements = {
  /**
   * The agent's claim lock, held to the end of the transaction
   * (docs/api/leases.md), of the kind its limits as this statement reads
   * them ask for. PostgreSQL: exclusive for an agent with limits, so its
   * claims take turns; shared for one without, so its claims go on at once,
   * yet a claim that finds limits set waits for them all to commit (and they
   * for it), and its count sees every lease granted before it. Claims of
   * other agents, and every other write, do not wait for it. SQLite: no lock,
   * its writers are serialised already. No row: no such agent in the project.
   *
   * The rest of the claim's transaction runs on PostgreSQL's generic plans
   * (plan_cache_mode, for this transaction only): the claims of an agent with
   * limits take turns, so what each spends under the lock bounds them all,
   * and planning the heads afresh each time cost more than running them (a
   * 0.6 ms bind each, in a turn of about 4 ms). The plans stay those of
   * the indexes these statements are written for; statistics renewed by
   * ANALYZE plan them again.
   */
  lockForClaim: statement<{ exclusive: boolean | number }, [agentId: string, projectId: string]>(
    "leases_lock_for_claim",
    {
      sqlite: `SELECT ${limitsSet} AS exclusive FROM agents WHERE id = $1 AND project_id = $2`,
      postgresql: `SELECT ${limitsSet} AS exclusive,
          (CASE WHEN ${limitsSet} THEN pg_advisory_xact_lock(1818585971, hashtext($1))
                ELSE pg_advisory_xact_lock_shared(1818585971, hashtext($1)) END)::text AS locked,
          set_config('plan_cache_mode', 'force_generic_plan', true) AS plans
        FROM agents WHERE id = $1 AND project_id = $2`,
    },
  ),
  /**
   * The agent as the claim decides by, read once its lock is held, on every
   * row beside one of its running keys and how many tasks of that key run:
   * its running keys walked as a loose scan of the (agent_id, status,
   * concurrency_key, …) index, then each key's count, a range of the same
   * index; the NULL key last (its count may be 0). Written so, the plan is
   * the same whatever the statistics: the cost is the agent's running tasks,
   * never its pending ones.
   */
  agentWithRunning: statement<
    ClaimAgentRow & { concurrency_key: string | null; running: number | bigint | string },
    [agentId: string, projectId: string]
  >("leases_agent_with_running", {
    sqlite: agentWithRunningSql("sqlite"),
    postgresql: agentWithRunningSql("postgresql"),
  }),
  heads: statement<HeadRow, [agentId: string, now: Date, projectId: string]>("leases_heads", {
    sqlite: headsSql("sqlite"),
    postgresql: headsSql("postgresql"),
  }),
  /** Leases task `$8`, if it is still the agent's and pending (another claim may have just taken it). */
  claim: statement<
    TaskRow,
    [
      agentId: string,
      now: Date,
      leaseId: string,
      worker: string | null,
      expiresAt: Date,
      durationSeconds: number,
      projectId: string,
      taskId: string,
    ]
  >("leases_claim", {
    sqlite: `UPDATE tasks SET ${leaseColumns},
        updated_at = MAX($2, strftime('%Y-%m-%dT%H:%M:%f+00:00', updated_at, '+0.001 seconds'))
      WHERE id = $8 AND agent_id = $1 AND project_id = $7 AND status = 'pending'
      RETURNING ${taskColumns}`,
    postgresql: `UPDATE tasks SET ${leaseColumns},
        updated_at = GREATEST($2::timestamp, tasks.updated_at + interval '1 millisecond')
      WHERE id = COALESCE(${firstUnlocked(`t.concurrency_key = ${headKey}`)},
          ${firstUnlocked(`t.concurrency_key IS NULL AND ${headKey} IS NULL`)})
        AND agent_id = $1 AND project_id = $7 AND status = 'pending'
      RETURNING ${taskColumns}`,
  }),
  /** A pool lease took one of the agent's tasks: its turn is over (not a change of the agent: no version, no event). */
  tookTurn: statement<unknown, [agentId: string, now: Date, projectId: string]>(
    "leases_took_turn",
    "UPDATE agents SET last_leased_at = $2 WHERE id = $1 AND project_id = $3",
  ),
  /** The running agents a pool lease's selector matches, in turn order, with their top ready priority. */
  poolAgents: {
    all: poolAgents("all"),
    ids: poolAgents("ids"),
    type: poolAgents("type"),
    metadata: poolAgents("metadata"),
  },
  /** Of the listed ids (JSON array text), those that name an agent of the project. */
  existingAgents: statement<{ id: string }, [projectId: string, agentIds: string]>("leases_existing_agents", {
    sqlite: "SELECT id FROM agents WHERE project_id = $1 AND id IN (SELECT value FROM json_each($2))",
    postgresql: "SELECT id FROM agents WHERE project_id = $1 AND id IN (SELECT jsonb_array_elements_text($2::jsonb))",
  }),
  /**
   * A renewal: the lease's expiry and duration only, if the task is still at
   * the version it was read at. Not a change of the task: no new version,
   * updated_at kept, no event (docs/api/events.md).
   */
  renew: statement<
    TaskRow,
    [id: string, leaseId: string, version: number, expiresAt: Date, durationSeconds: number, projectId: string]
  >(
    "leases_renew",
    `UPDATE tasks SET lease_expires_at = $4, lease_duration_seconds = $5
     WHERE id = $1 AND lease_id = $2 AND version = $3 AND project_id = $6 RETURNING ${taskColumns}`,
  ),
  /** The task holding lease `leaseId` (tasks_lease_id_key), under its agent. */
  byLease: statement<TaskRow, [leaseId: string, agentId: string, projectId: string]>(
    "leases_by_id",
    `SELECT ${taskColumns} FROM tasks WHERE lease_id = $1 AND agent_id = $2 AND project_id = $3`,
  ),
  /**
   * When the agent's next task is or becomes ready: the earliest run_at of
   * its pending tasks whose deadline is still ahead (tasks_agent_id_status_run_at_idx).
   */
  nextRunAt: statement<{ run_at: string }, [agentId: string, now: Date, projectId: string]>(
    "leases_next_run_at",
    `SELECT run_at FROM tasks WHERE agent_id = $1 AND status = 'pending' AND (deadline_at IS NULL OR deadline_at > $2)
       AND project_id = $3
     ORDER BY run_at LIMIT 1`,
  ),
  agentStatus: statement<{ status: string }, [agentId: string, projectId: string]>(
    "leases_agent_status",
    "SELECT status FROM agents WHERE id = $1 AND project_id = $2",
  ),
};
