import { setTimeout as sleep } from "node:timers/promises";
import type { Database, Queryable, Tx } from "../../db/index.js";
import type { Logger } from "../../logger.js";
import type { Acting } from "../../resources/acting.js";
import { type AuditAction, type AuditEventOut, type AuditListInput, parseActions } from "./schemas.js";
import { type AuditRow, auditStatements as statements } from "./sql.js";

/** What an entry is about. */
export interface AuditTarget {
  type: string;
  id: string;
}

const toAuditEvent = (row: AuditRow): AuditEventOut => ({
  id: String(row.id),
  occurred_at: row.occurred_at,
  action: row.action as AuditAction,
  actor: { type: row.actor_type as AuditEventOut["actor"]["type"], id: row.actor_id, label: row.actor_label },
  target: { type: row.target_type, id: row.target_id },
  request_id: row.request_id,
  client_address: row.client_address,
  details: JSON.parse(row.details),
});

/** `auth.denied` is recorded at most once per credential and minute, per instance. */
const DENIED_EVERY_MS = 60_000;
const deniedLately = new Map<string, number>();

// The purge: small batches, each its own short transaction, as the event log's.
const PURGE_BATCH = 500;
const PURGE_PAUSE_MS = 20;
const PURGE_EVERY_MS = 60_000;

export const auditService = {
  /**
   * Records `action` on `target` by `acting.actor` in `acting.projectId`,
   * inside `tx`: the entry commits with the change it records, or not at all.
   * `details` never holds a secret.
   */
  async record(
    tx: Tx,
    acting: Acting,
    action: AuditAction,
    target: AuditTarget,
    details: Record<string, unknown> = {},
  ): Promise<void> {
    const { actor } = acting;
    const columns = [
      acting.projectId,
      new Date(),
      action,
      actor.type,
      actor.id,
      actor.label,
      target.type,
      target.id,
      acting.requestId,
      acting.clientAddress,
      JSON.stringify(details),
    ] as const;
    if (tx.provider === "postgresql") {
      await tx.run(statements.insertOrdered, [tx.reserveOrdinals(1), ...columns]);
      return;
    }
    const reserved = await tx.get(statements.reserveId, []);
    if (!reserved) throw new Error("No audit id was reserved");
    await tx.run(statements.insert, [reserved.position, ...columns]);
  },

  /**
   * A credential refused for its scope or for a project it cannot act in:
   * recorded in its own transaction, at most once per credential (`credential`)
   * and minute, so a refused client cannot fill the log.
   */
  async recordDenied(db: Database, acting: Acting, credential: string, details: Record<string, unknown>) {
    const now = Date.now();
    if ((deniedLately.get(credential) ?? 0) > now - DENIED_EVERY_MS) return;
    // Forgets credentials whose minute has passed, so many cannot grow the map without end.
    if (deniedLately.size >= 10_000) {
      for (const [key, at] of deniedLately) if (at <= now - DENIED_EVERY_MS) deniedLately.delete(key);
    }
    deniedLately.set(credential, now);
    const target = { type: "project", id: acting.projectId };
    await db.transaction((tx) => auditService.record(tx, acting, "auth.denied", target, details));
  },

  /** A page of a project's entries, oldest first, after `after`. */
  async list(db: Queryable, projectId: string, query: AuditListInput): Promise<AuditEventOut[]> {
    const filter = query.action === undefined ? undefined : parseActions(query.action);
    const actions = filter && "actions" in filter ? filter : { actions: [], prefixes: [] };
    const rows = await db.all(statements.page, [
      projectId,
      BigInt(query.after ?? 0),
      filter ? JSON.stringify(actions.actions) : null,
      filter ? JSON.stringify(actions.prefixes) : null,
      query.actor_id ?? null,
      query.limit,
    ]);
    return rows.map(toAuditEvent);
  },
};

/**
 * Deletes the entries that occurred before `cutoff`, in batches of a few
 * hundred, each its own statement, with a pause between them (until `stop`
 * says so); the number deleted.
 */
export async function purgeAuditEvents(db: Database, cutoff: Date, stop: () => boolean = () => false): Promise<number> {
  let purged = 0;
  for (;;) {
    const deleted = await db.run(statements.purge, [cutoff, PURGE_BATCH]);
    purged += deleted;
    if (deleted < PURGE_BATCH || stop()) return purged;
    await sleep(PURGE_PAUSE_MS);
  }
}

/** Deletes entries older than `retentionMs`, in small batches, every minute, until `stop`. */
export function startAuditPurge({ db, retentionMs, logger }: { db: Database; retentionMs: number; logger: Logger }) {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const purge = async () => {
    const purged = await purgeAuditEvents(db, new Date(Date.now() - retentionMs), () => stopped);
    if (purged > 0) logger.debug({ purged }, "audit entries past retention purged");
  };
  const timer = setInterval(() => {
    running = purge().catch((error: unknown) => logger.warn({ err: error }, "purging audit entries failed"));
  }, PURGE_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
