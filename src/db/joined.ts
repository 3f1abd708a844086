import type { Database, Tx } from "./database.js";

/**
 * `db` as seen from inside `tx`, a transaction already open: every statement
 * goes to `tx`, and a transaction that work opens (a service's write) joins
 * `tx` instead of starting one, so it commits or rolls back with whatever else
 * `tx` holds.
 */
export function joined(db: Database, tx: Tx): Database {
  return {
    provider: db.provider,
    prisma: db.prisma,
    inTransaction: true,
    all: (statement, args) => tx.all(statement, args),
    get: (statement, args) => tx.get(statement, args),
    run: (statement, args) => tx.run(statement, args),
    transaction: (work) => work(tx),
    notify: (channel, payload) => tx.notify(channel, payload),
    listen: (channel, onNotify) => db.listen(channel, onNotify),
    close: () => db.close(),
  };
}
