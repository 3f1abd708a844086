/**
 * Ids of ordered logs (the event log, the audit log) on PostgreSQL are
 * `transaction id × 2^22 + ordinal`: every row of a transaction sorts after
 * those of the transactions that had ids before it, which is what lets
 * readers stay below the oldest running writer (`readHorizon`) and never see
 * a smaller id later. On SQLite writers are serialised: a counter does.
 */
export const ordinalsPerTransaction = 4_194_304;

/** The SQL of the id of the current transaction's row number `ordinal` (a SQL expression, from 1; tx.reserveOrdinals). */
export const postgresOrderedId = (ordinal: string) =>
  `pg_current_xact_id()::text::bigint * ${ordinalsPerTransaction} + ${ordinal}`;

/**
 * PostgreSQL: the ids a reader may see now, in the statement that reads
 * them: those below the oldest transaction of this database still running.
 * Every transaction with a smaller id has ended, so a row that becomes
 * visible later has a larger id than any returned now. The snapshot's xmin would do, but it counts the
 * transactions of every database in the cluster: a long one elsewhere (a
 * CREATE DATABASE, a migration, a report) would hold every reader back. So a
 * running transaction is skipped only when pg_stat_activity shows it belongs
 * to another database; one it cannot place still counts, which is safe.
 * SQLite needs no horizon: its writers are serialised.
 */
export const readHorizon = `(SELECT COALESCE(
    (SELECT MIN(running::text::bigint) FROM pg_snapshot_xip(pg_current_snapshot()) AS running
      WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity AS other
        WHERE other.datname IS NOT NULL AND other.datname <> current_database()
          AND other.backend_xid::text::bigint = running::text::bigint % 4294967296)),
    pg_snapshot_xmax(pg_current_snapshot())::text::bigint) * ${ordinalsPerTransaction})`;
