import { randomUUID } from "node:crypto";
import type { Database, Queryable } from "../../db/index.js";
import { AppError, notFound } from "../../errors.js";
import type { KeptAnswer } from "../../idempotency/kept-answer.js";
import { nextUpdatedAt, retryLostRaces } from "../../resources/conditional-writes.js";
import { isUuid } from "../../resources/schemas.js";
import { recordEvents } from "../events/outbox.js";
import { hasLiveLease, leaseEnd, released } from "../tasks/outcomes.js";
import { tasksService } from "../tasks/service.js";
import type { LeaseCreateBody, LeaseOut } from "./schemas.js";
import { leaseStatements, toLease } from "./sql.js";
import { watchAgent } from "./wake-ups.js";

const leaseNotFound = () => notFound("Lease");
const agentNotFound = () => notFound("Agent");

/** "Agent not found" when the agent is missing, else "Lease not found". */
async function missing(db: Queryable, projectId: string, agentId: string): Promise<AppError> {
  const agent = isUuid(agentId) ? await db.get(leaseStatements.agentStatus, [agentId, projectId]) : undefined;
  return agent ? leaseNotFound() : agentNotFound();
}

/** The row of live lease `leaseId` of the agent, or undefined (an expired lease is gone, even before it is settled). */
async function liveLease(db: Queryable, projectId: string, agentId: string, leaseId: string, now: Date) {
  const row = isUuid(leaseId) ? await db.get(leaseStatements.byLease, [leaseId, agentId, projectId]) : undefined;
  return row && hasLiveLease(row, now) ? row : undefined;
}

/** Takes the agent's next ready task, with its task.leased event; undefined when none is ready. */
async function claim(
  db: Database,
  projectId: string,
  agentId: string,
  request: LeaseCreateBody,
  answer: KeptAnswer | undefined,
): Promise<LeaseOut | undefined> {
  const now = new Date();
  const expiresAt = new Date(now.getTime() + request.duration_seconds * 1000);
  const lease = await db.transaction(async (tx) => {
    const row = await tx.get(leaseStatements.claim, [
      agentId,
      now,
      randomUUID(),
      request.worker ?? null,
      expiresAt,
      request.duration_seconds,
      projectId,
    ]);
    if (!row) return undefined;
    const leased = toLease(row);
    const { task } = leased;
    const changes = { status: ["pending", "running"], lease: [null, task.lease] } as const;
    await recordEvents(
      tx,
      projectId,
      [{ type: "task.leased", agentId, taskId: task.id, data: { task, changes } }],
      new Date(task.updated_at),
    );
    await answer?.keep(tx, leased);
    return leased;
  });
  if (lease) return lease;
  const agent = await db.get(leaseStatements.agentStatus, [agentId, projectId]);
  if (!agent) throw agentNotFound();
  if (agent.status !== "running") {
    throw new AppError("conflict", `Agent is ${agent.status}: only a running agent gets work`, {
      agent_status: agent.status,
    });
  }
  return undefined;
}

/** When the agent's next task is or becomes ready (ms since the epoch), or undefined when it has none pending. */
async function nextReadyAt(db: Database, projectId: string, agentId: string): Promise<number | undefined> {
  const row = await db.get(leaseStatements.nextRunAt, [agentId, new Date(), projectId]);
  return row ? Date.parse(row.run_at) : undefined;
}

/**
 * Leases (docs/api/leases.md): a worker's hold on one task of its agent. A lease is
 * the task's lease columns: it lives as long as the task holds it and its
 * expiry is ahead; the settler (./settler.ts) ends those that run out.
 */
export const leasesService = {
  /**
   * The agent's next ready task, leased; null when none is ready, after
   * waiting up to `wait_seconds` for one. The wait holds no transaction and
   * polls nothing: it sleeps until a notification for the agent, the next
   * run_at of its pending tasks, the end of the wait or `signal` (the client
   * left, or the process is shutting down).
   */
  async create(
    db: Database,
    projectId: string,
    agentId: string,
    request: LeaseCreateBody,
    signal: AbortSignal,
    answer?: KeptAnswer,
  ): Promise<LeaseOut | null> {
    if (!isUuid(agentId)) throw agentNotFound();
    const waitUntil = Date.now() + request.wait_seconds * 1000;
    // Listening before the first attempt: a task created in between is not missed.
    const watch = request.wait_seconds > 0 ? watchAgent(db, agentId) : undefined;
    try {
      let lease = await claim(db, projectId, agentId, request, answer);
      let next = lease || !watch ? undefined : await nextReadyAt(db, projectId, agentId);
      while (!lease && watch) {
        const now = Date.now();
        if (signal.aborted || now >= waitUntil) return null;
        // A run_at still ahead sets the alarm; a ready task that another worker just took only a notification.
        await watch.next(next !== undefined && next > now ? Math.min(next, waitUntil) : waitUntil, signal);
        if (signal.aborted) return null;
        next = await nextReadyAt(db, projectId, agentId);
        if (next !== undefined && next <= Date.now()) lease = await claim(db, projectId, agentId, request, answer);
      }
      if (lease && signal.aborted && !answer) {
        // Nobody is there to take it: give it straight back. (A lease kept for an Idempotency-Key
        // stays: the client's retry with that key is answered with it.)
        await leasesService.release(db, projectId, agentId, lease.id).catch(() => {});
        return null;
      }
      return lease ?? null;
    } finally {
      watch?.close();
    }
  },

  async get(db: Database, projectId: string, agentId: string, leaseId: string): Promise<LeaseOut> {
    const row = isUuid(agentId) ? await liveLease(db, projectId, agentId, leaseId, new Date()) : undefined;
    if (!row) throw await missing(db, projectId, agentId);
    return toLease(row);
  },

  /**
   * Extends the lease to now + `durationSeconds` (never past the task's
   * deadline). Without a duration, the lease's own: the duration it was
   * created or last renewed with.
   */
  async renew(
    db: Database,
    projectId: string,
    agentId: string,
    leaseId: string,
    durationSeconds?: number,
  ): Promise<LeaseOut> {
    if (!isUuid(agentId)) throw agentNotFound();
    const row = await retryLostRaces("Lease", () =>
      db.transaction(async (tx) => {
        const now = new Date();
        const before = await liveLease(tx, projectId, agentId, leaseId, now);
        if (!before) throw await missing(tx, projectId, agentId);
        const updatedAt = nextUpdatedAt(before.updated_at);
        const seconds = durationSeconds ?? (before.lease_duration_seconds as number);
        const after = {
          ...before,
          lease_expires_at: leaseEnd(before, updatedAt, seconds).toISOString(),
          lease_duration_seconds: seconds,
        };
        return tasksService.writeRow(tx, before, after, updatedAt);
      }),
    );
    return toLease(row);
  },

  /** Gives the task back: pending again at once, no attempt counted; cancelled if that was asked for (docs/api/leases.md). */
  async release(db: Database, projectId: string, agentId: string, leaseId: string): Promise<void> {
    if (!isUuid(agentId)) throw agentNotFound();
    await retryLostRaces("Lease", () =>
      db.transaction(async (tx) => {
        const before = await liveLease(tx, projectId, agentId, leaseId, new Date());
        if (!before) throw await missing(tx, projectId, agentId);
        const updatedAt = nextUpdatedAt(before.updated_at);
        return tasksService.writeRow(tx, before, released(before, updatedAt), updatedAt);
      }),
    );
  },
};
