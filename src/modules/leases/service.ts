import { randomUUID } from "node:crypto";
import type { Database, Queryable, Tx } from "../../db/index.js";
import { AppError, notFound } from "../../errors.js";
import type { KeptAnswer } from "../../idempotency/kept-answer.js";
import { lostRace, nextUpdatedAt, retryLostRaces } from "../../resources/conditional-writes.js";
import { isUuid } from "../../resources/schemas.js";
import { recordEvents } from "../events/outbox.js";
import { hasLiveLease, leaseEnd, released } from "../tasks/outcomes.js";
import { tasksService } from "../tasks/service.js";
import type { LeaseCreateBody, LeaseOut, PoolLeaseBody, PoolSelector } from "./schemas.js";
import { type ClaimAgentRow, type HeadRow, leaseStatements, type PoolSelectorKind, toLease } from "./sql.js";
import { type AgentWatch, watchAgent, watchAll } from "./wake-ups.js";

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

/*
 * Why a lock per agent, not a counting row (docs/api/leases.md). A claim must
 * never take an agent past max_running, or a key past max_running_per_key,
 * however many instances claim at once. A counting row (running per agent and
 * key) would have to be kept right by every write that ends a running task:
 * finishing, releasing, cancelling, the settler's expiries and deadlines, a
 * PATCH, a deletion; one missed path and the count is wrong for good, with
 * nothing to bring it back. The lock keeps no state: the claim counts the
 * agent's running tasks themselves, under a transaction-scoped advisory lock
 * of the agent (PostgreSQL) taken first, so each count sees every claim that
 * went before it (READ COMMITTED: each statement its own snapshot). What it
 * costs: the claims of an agent with limits take turns (each turn holds the
 * lock for a few statements per claim it serves, below). An agent without
 * limits takes the lock shared: its claims go on at once (two on the same
 * task: the second finds it taken and takes the next), yet a claim that
 * finds limits just set waits for them.
 * Claims of other agents, task writes and finishes never wait for it, and a
 * finish frees its slot just by being committed. SQLite serialises its
 * writers already: the same statements need no lock there.
 */

type Counts = Map<string, number>;
// Tasks without a key form one key; "" is never a key (1–100 characters).
const keyOf = (key: string | null) => key ?? "";

/**
 * The pick's order (docs/api/leases.md) among the keys' heads: highest
 * priority; then the key with the fewest running tasks; then earliest
 * run_at, created_at, id.
 */
function fairOrder(counts: Counts) {
  const running = (head: HeadRow) => counts.get(keyOf(head.concurrency_key)) ?? 0;
  return (a: HeadRow, b: HeadRow) =>
    b.priority - a.priority ||
    running(a) - running(b) ||
    Date.parse(a.run_at) - Date.parse(b.run_at) ||
    Date.parse(a.created_at) - Date.parse(b.created_at) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

interface Claimed {
  lease?: LeaseOut;
  /** The agent as the claim found it (undefined: missing). */
  agent?: ClaimAgentRow;
}

/** A claim waiting for its agent's next turn in this process. */
interface Waiting {
  request: LeaseCreateBody;
  answer: KeptAnswer | undefined;
  pool: boolean;
  settle: (claimed: Claimed | Promise<Claimed>) => void;
}

/*
 * Why claims take turns in the process too. The claims of an agent with
 * limits take turns at its lock anyway, so what one spends holding the lock
 * bounds them all. Waiting at the lock, each held one of the pool's
 * connections (finishes queued behind them), and each turn paid for its own
 * transaction: the lock, the agent's counts and the commit. So the claims of
 * one agent in one process wait here instead, holding nothing, and each turn
 * serves all that wait in one transaction, one claim after another, in
 * arrival order: the same picks, in the same order, as one turn each. A claim
 * with an Idempotency-Key has a turn of its own: its key found taken rolls
 * back its transaction, which must not undo another request's lease. On
 * PostgreSQL, 32 workers of one agent with limits: 271 → 406 leases and
 * finishes a second, 2,205 → 1,538 µs of CPU each (docs/performance.md).
 */
const waitingByDatabase = new WeakMap<Database, Map<string, Waiting[]>>();

/**
 * Takes the agent's next task within its limits, with its task.leased event;
 * no lease when none is ready or the limits are reached. The one claim of
 * both kinds of lease: `pool` marks the agent's turn as taken.
 */
function claim(
  db: Database,
  projectId: string,
  agentId: string,
  request: LeaseCreateBody,
  answer: KeptAnswer | undefined,
  pool = false,
): Promise<Claimed> {
  let waiting = waitingByDatabase.get(db);
  if (!waiting) {
    waiting = new Map();
    waitingByDatabase.set(db, waiting);
  }
  const key = `${projectId} ${agentId}`;
  return new Promise<Claimed>((settle) => {
    const line = waiting.get(key);
    if (line) {
      line.push({ request, answer, pool, settle });
      return;
    }
    waiting.set(key, [{ request, answer, pool, settle }]);
    void serveTurns(db, projectId, agentId, waiting, key);
  });
}

/** Serves the agent's waiting claims, turn after turn, until none waits. */
async function serveTurns(
  db: Database,
  projectId: string,
  agentId: string,
  waiting: Map<string, Waiting[]>,
  key: string,
): Promise<void> {
  for (let line = waiting.get(key) ?? []; line.length > 0; line = waiting.get(key) ?? []) {
    // The first in line alone if it has an Idempotency-Key; else it and those behind it up to the next that has one.
    const solo = line[0]?.answer !== undefined;
    const count = solo ? 1 : line.findIndex((claim) => claim.answer !== undefined);
    const turn = line.splice(0, count === -1 ? line.length : count);
    const claimed = takeTurn(db, projectId, agentId, turn);
    turn.forEach((claim, i) => {
      claim.settle(claimed.then((all) => all[i] as Claimed));
    });
    await claimed.catch(() => {});
  }
  waiting.delete(key);
}

/** One turn at the agent's lock: the claims of `turn`, in order, in one transaction. */
async function takeTurn(db: Database, projectId: string, agentId: string, turn: Waiting[]): Promise<Claimed[]> {
  for (;;) {
    const claimed = await db.transaction(async (tx): Promise<Claimed[] | "limited"> => {
      const all = (claimed: Claimed) => turn.map(() => claimed);
      // The lock's kind follows the limits as the lock's statement read them; read again once it is held, they decide.
      const lock = await tx.get(leaseStatements.lockForClaim, [agentId, projectId]);
      if (!lock) return all({});
      const rows = await tx.all(leaseStatements.agentWithRunning, [agentId, projectId]);
      const first = rows[0];
      if (!first) return all({});
      const agent: ClaimAgentRow = {
        status: first.status,
        max_running: first.max_running,
        max_running_per_key: first.max_running_per_key,
      };
      if (agent.status !== "running") return all({ agent });
      // Limits set since the lock's statement read them: again, under the exclusive lock.
      if (!lock.exclusive && limited(agent)) return "limited";
      const counts: Counts = new Map(rows.map((row) => [keyOf(row.concurrency_key), Number(row.running)]));
      const results: Claimed[] = [];
      // Once a claim finds nothing (none ready, or the limits reached), neither would those after it.
      let exhausted = false;
      for (const { request, answer, pool } of turn) {
        const claimed = exhausted
          ? { agent }
          : await claimWithin(tx, projectId, agentId, agent, counts, request, answer, pool);
        if (claimed.lease) {
          // Counted for the claims after it in this turn, as the next turn's count would.
          const key = keyOf(claimed.lease.task.concurrency_key);
          counts.set(key, (counts.get(key) ?? 0) + 1);
        } else exhausted = true;
        results.push(claimed);
      }
      return results;
    });
    if (claimed !== "limited") return claimed;
  }
}

const limited = (agent: ClaimAgentRow) => agent.max_running !== null || agent.max_running_per_key !== null;

/** The claim's work once its lock is held and the agent is running: count, pick, lease. */
async function claimWithin(
  tx: Tx,
  projectId: string,
  agentId: string,
  agent: ClaimAgentRow,
  counts: Counts,
  request: LeaseCreateBody,
  answer: KeptAnswer | undefined,
  pool: boolean,
): Promise<Claimed> {
  let total = 0;
  for (const running of counts.values()) total += running;
  // The lease's time is taken once the count is read: after every finish the count saw, so the event log's
  // times tell the running tasks at any instant as the claim saw them.
  const now = new Date();
  const expiresAt = new Date(now.getTime() + request.duration_seconds * 1000);
  if (agent.max_running !== null && total >= agent.max_running) return { agent };
  const perKey = agent.max_running_per_key;
  const pick = async () =>
    (await tx.all(leaseStatements.heads, [agentId, now, projectId]))
      .filter((head) => perKey === null || (counts.get(keyOf(head.concurrency_key)) ?? 0) < perKey)
      .sort(fairOrder(counts));
  // Under a shared lock, claims at once may pick the same head: the one that comes second finds it taken and
  // reads the heads again (a new snapshot, past the other's commit). Each such round another claim committed.
  for (let round = 0; round < maxRounds; round++) {
    const heads = await pick();
    if (heads.length === 0) break;
    const lease = await leaseFirst(tx, projectId, agentId, heads, now, expiresAt, request, answer, pool);
    if (lease) return { lease, agent };
  }
  return { agent };
}

// Rounds of the pick a claim tries before answering that nothing is ready.
const maxRounds = 100;

/** Leases the first of `heads` still pending, with its task.leased event; undefined when every one was taken. */
async function leaseFirst(
  tx: Tx,
  projectId: string,
  agentId: string,
  heads: HeadRow[],
  now: Date,
  expiresAt: Date,
  request: LeaseCreateBody,
  answer: KeptAnswer | undefined,
  pool: boolean,
): Promise<LeaseOut | undefined> {
  for (const head of heads) {
    // No row: taken by a claim at once (an agent without limits), or cancelled or deleted since. The next.
    const row = await tx.get(leaseStatements.claim, [
      agentId,
      now,
      randomUUID(),
      request.worker ?? null,
      expiresAt,
      request.duration_seconds,
      projectId,
      head.id,
    ]);
    if (!row) continue;
    const leased = toLease(row);
    const { task } = leased;
    const changes = { status: ["pending", "running"], lease: [null, task.lease] } as const;
    await recordEvents(
      tx,
      projectId,
      [{ type: "task.leased", agentId, taskId: task.id, data: { task, changes } }],
      new Date(task.updated_at),
    );
    if (pool) await tx.run(leaseStatements.tookTurn, [agentId, now, projectId]);
    await answer?.keep(tx, leased);
    return leased;
  }
  return undefined;
}

/** A per-agent claim: the lease, undefined when none is ready; 404 for a missing agent, 409 for one not running. */
async function claimOfAgent(
  db: Database,
  projectId: string,
  agentId: string,
  request: LeaseCreateBody,
  answer: KeptAnswer | undefined,
): Promise<LeaseOut | undefined> {
  const { lease, agent } = await claim(db, projectId, agentId, request, answer);
  if (lease) return lease;
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

/** The pool's statement for the selector, and its values after the project and the time. */
function selected(selector: PoolSelector): [PoolSelectorKind, string[]] {
  if (selector.agent_ids) return ["ids", [JSON.stringify(selector.agent_ids)]];
  if (selector.agent_type) return ["type", [selector.agent_type]];
  const first = selector.metadata && Object.entries(selector.metadata)[0];
  if (first) return ["metadata", [JSON.stringify(selector.metadata), ...first]];
  return ["all", []];
}

/**
 * A pool lease's attempt: the selector's running agents that have a ready
 * task, highest top priority first and, at equal priority, in turn order
 * (the agent a pool lease served longest ago first); each is asked through
 * the per-agent claim, limits and all, until one gives a task. Also says
 * when the pool's next task becomes ready.
 */
async function claimOfPool(
  db: Database,
  projectId: string,
  request: PoolLeaseBody,
  answer: KeptAnswer | undefined,
): Promise<{ lease?: LeaseOut; next?: number }> {
  const [kind, values] = selected(request);
  const agents = await db.all(leaseStatements.poolAgents[kind], [projectId, new Date(), ...values]);
  const candidates = agents
    .filter((agent) => agent.top_priority !== null)
    .sort((a, b) => (b.top_priority as number) - (a.top_priority as number));
  for (const agent of candidates) {
    const { lease } = await claim(db, projectId, agent.id, request, answer, true);
    if (lease) return { lease };
  }
  const times = agents.flatMap((agent) => (agent.next_run_at ? [Date.parse(agent.next_run_at)] : []));
  return { next: times.length > 0 ? Math.min(...times) : undefined };
}

/**
 * The long poll of both kinds of lease: `attempt` until it gives a lease,
 * sleeping in between until a notification the watch cares about, the next
 * ready time `attempt` reported, the end of the wait or `signal`.
 */
async function longPoll(
  request: LeaseCreateBody,
  signal: AbortSignal,
  watch: AgentWatch | undefined,
  attempt: () => Promise<{ lease?: LeaseOut | undefined; next?: number | undefined }>,
): Promise<LeaseOut | undefined> {
  const waitUntil = Date.now() + request.wait_seconds * 1000;
  let { lease, next } = await attempt();
  while (!lease && watch) {
    const now = Date.now();
    if (signal.aborted || now >= waitUntil) return undefined;
    // A run_at still ahead sets the alarm; a ready task that another worker just took, or a limit reached,
    // only a notification (a finished task frees its slot with its event).
    await watch.next(next !== undefined && next > now ? Math.min(next, waitUntil) : waitUntil, signal);
    if (signal.aborted) return undefined;
    ({ lease, next } = await attempt());
  }
  return lease;
}

/** The lease for the client; given straight back if nobody is there to take it. */
async function handOver(
  db: Database,
  projectId: string,
  lease: LeaseOut | undefined,
  signal: AbortSignal,
  answer: KeptAnswer | undefined,
): Promise<LeaseOut | null> {
  if (lease && signal.aborted && !answer) {
    // (A lease kept for an Idempotency-Key stays: the client's retry with that key is answered with it.)
    await leasesService.release(db, projectId, lease.agent_id, lease.id).catch(() => {});
    return null;
  }
  return lease ?? null;
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
    // Listening before the first attempt: a task created in between is not missed.
    const watch = request.wait_seconds > 0 ? watchAgent(db, agentId) : undefined;
    try {
      const attempt = async () => {
        const lease = await claimOfAgent(db, projectId, agentId, request, answer);
        return { lease, next: lease || !watch ? undefined : await nextReadyAt(db, projectId, agentId) };
      };
      return await handOver(db, projectId, await longPoll(request, signal, watch, attempt), signal, answer);
    } finally {
      watch?.close();
    }
  },

  /**
   * A pool lease (docs/api/leases.md): the next task of any of the project's
   * running agents the selector matches, by the same claim as an agent's own
   * lease; null when none is ready within `wait_seconds`. 404 when agent_ids
   * names an agent the project does not have.
   */
  async createInPool(
    db: Database,
    projectId: string,
    request: PoolLeaseBody,
    signal: AbortSignal,
    answer?: KeptAnswer,
  ): Promise<LeaseOut | null> {
    if (request.agent_ids) {
      const ids = JSON.stringify(request.agent_ids);
      const found = new Set((await db.all(leaseStatements.existingAgents, [projectId, ids])).map((row) => row.id));
      if (request.agent_ids.some((id) => !found.has(id))) throw agentNotFound();
    }
    // Listening before the first attempt, as for an agent's own lease.
    const watch = request.wait_seconds > 0 ? watchAll(db) : undefined;
    try {
      const lease = await longPoll(request, signal, watch, () => claimOfPool(db, projectId, request, answer));
      return await handOver(db, projectId, lease, signal, answer);
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
        const seconds = durationSeconds ?? (before.lease_duration_seconds as number);
        // Not a change of the task: its version, updated_at and the event log stay as they are.
        const renewed = await tx.get(leaseStatements.renew, [
          before.id,
          leaseId,
          before.version,
          leaseEnd(before, now, seconds),
          seconds,
          projectId,
        ]);
        return renewed ?? lostRace;
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
