import { Gauge, Registry } from "prom-client";
import { type Database, statement } from "../db/index.js";
import { agentStatuses } from "../modules/agents/schemas.js";
import { taskStatuses } from "../modules/tasks/schemas.js";

// Counted at most this often: a scrape every few seconds from several
// scrapers costs one pair of index-only scans, not one per scrape.
const FRESH_FOR_MS = 5_000;

// Both are answered from an index that leads with status (tasks: status,
// deadline_at; agents: status, created_at, id): index-only scans, which never
// read the rows themselves.
const statements = {
  tasks: statement<{ status: string; count: number | bigint }>(
    "metrics_task_counts",
    "SELECT status, COUNT(*) AS count FROM tasks GROUP BY status",
  ),
  agents: statement<{ status: string; count: number | bigint }>(
    "metrics_agent_counts",
    "SELECT status, COUNT(*) AS count FROM agents GROUP BY status",
  ),
};

/**
 * The `tasks{status}` and `agents{status}` gauges of one database, in a
 * registry of their own that /metrics merges with the process's: every
 * status appears, 0 when no row has it.
 */
export function countGauges(db: Database): Registry {
  const registry = new Registry();
  let counted: Promise<Map<string, number>[]> | undefined;
  let countedAt = 0;
  const counts = () => {
    if (!counted || performance.now() - countedAt > FRESH_FOR_MS) {
      countedAt = performance.now();
      counted = Promise.all([db.all(statements.tasks, []), db.all(statements.agents, [])]).then((results) =>
        results.map((rows) => new Map(rows.map((row) => [row.status, Number(row.count)]))),
      );
      // A failed count is not kept: the next scrape asks again.
      counted.catch(() => {
        counted = undefined;
      });
    }
    return counted;
  };
  const gauge = (name: string, help: string, statuses: readonly string[], index: 0 | 1) =>
    new Gauge({
      name,
      help,
      labelNames: ["status"] as const,
      registers: [registry],
      async collect() {
        const byStatus = (await counts())[index] as Map<string, number>;
        for (const status of new Set([...statuses, ...byStatus.keys()])) {
          this.set({ status }, byStatus.get(status) ?? 0);
        }
      },
    });
  gauge("tasks", "Tasks by status", taskStatuses, 0);
  gauge("agents", "Agents by status", agentStatuses, 1);
  return registry;
}
