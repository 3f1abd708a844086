import type { Database } from "../../db/index.js";

/**
 * What wakes a long poll for an agent's next task. Every change of a task is
 * recorded as an event, and every event notifies channel `events` with its
 * agent's id once committed, on every instance (src/modules/events/outbox.ts): a task
 * created, released or retried anywhere is told here at once. A payload of ""
 * (another SQLite process committed, or PostgreSQL's LISTEN connection came
 * back) may concern anyone, so it wakes every watch. A notification only says
 * "look again": the tables say whether a task is ready.
 */
export interface AgentWatch {
  /**
   * Resolves when a notification for the agent arrived since the previous
   * call (at once if one already did), at time `until` (ms since the epoch),
   * or when `signal` aborts, whichever is first.
   */
  next(until: number, signal: AbortSignal): Promise<void>;
  close(): void;
}

export function watchAgent(db: Database, agentId: string): AgentWatch {
  return watch(db, (payload) => payload === agentId || payload === "");
}

/**
 * A pool lease's watch (docs/api/leases.md): any change in any agent may
 * concern it (a task of one of its agents, or an agent that starts running
 * and so joins the pool). A notification costs it one look at the pool's
 * agents.
 */
export function watchAll(db: Database): AgentWatch {
  return watch(db, () => true);
}

function watch(db: Database, concerns: (payload: string) => boolean): AgentWatch {
  let told = false;
  let wake: (() => void) | undefined;
  const stop = db.listen("events", (payload) => {
    if (!concerns(payload)) return;
    told = true;
    wake?.();
  });
  return {
    async next(until, signal) {
      if (!told && !signal.aborted) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal.removeEventListener("abort", done);
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(done, Math.max(0, until - Date.now()));
          signal.addEventListener("abort", done, { once: true });
          wake = done;
        });
      }
      told = false;
    },
    close: stop,
  };
}
