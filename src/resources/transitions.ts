import { AppError } from "../errors.js";
import type { AgentStatus } from "../modules/agents/schemas.js";
import type { TaskStatus } from "../modules/tasks/schemas.js";

/** SPEC §3: the states an agent may move to from each state. */
export const agentTransitions: Readonly<Record<AgentStatus, readonly AgentStatus[]>> = {
  idle: ["running", "stopped"],
  running: ["idle", "paused", "error", "stopped"],
  paused: ["running", "stopped"],
  error: ["idle", "stopped"],
  stopped: ["idle"],
};

/** SPEC §4: pending → running → succeeded | failed; pending | running → cancelled; the rest are final. */
export const taskTransitions: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ["running", "cancelled"],
  running: ["succeeded", "failed", "cancelled"],
  succeeded: [],
  failed: [],
  cancelled: [],
};

/**
 * Whether moving `from` → `to` writes anything: false when the state stays
 * the same (a no-op success), true when the table allows it; otherwise 409.
 */
export function isStatusChange<S extends string>(table: Readonly<Record<S, readonly S[]>>, from: S, to: S): boolean {
  if (from === to) return false;
  const allowed = table[from];
  if (allowed.includes(to)) return true;
  throw new AppError("conflict", `Cannot change status from ${from} to ${to}`, { from, to, allowed: [...allowed] });
}
