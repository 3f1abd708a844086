import { Gauge, Registry } from "prom-client";
import type { Database } from "../../db/index.js";
import { agentStatuses } from "../../modules/agents/schemas.js";
import { agentsService } from "../../modules/agents/service.js";
import { taskStatuses } from "../../modules/tasks/schemas.js";
import { tasksService } from "../../modules/tasks/service.js";

// Counted at most this often: a scrape every few seconds from several
// scrapers costs one pair of index-only scans, not one per scrape.
const FRESH_FOR_MS = 5_000;

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
      counted = Promise.all([tasksService.countByStatus(db), agentsService.countByStatus(db)]);
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
