import { type Queryable, statement } from "../db/index.js";

/** A response as it is kept: `body` is the response body as the caller stores it (JSON text, or sealed). */
export interface KeptResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A kept key, as `find` reads it. */
export interface KeptRequest {
  fingerprint: string;
  /** `running` while the first request runs, `done` once its response is kept. */
  state: string;
  response_status: number | null;
  response_body: string | null;
  /** For a running claim, when it lapses unless its request renews it. */
  expires_at: string;
}

/**
 * A kept key's row as `insertKept` takes it: the response under a key nobody
 * holds, `now` being when it was made.
 */
export type KeptColumns = [
  sender: string,
  key: string,
  fingerprint: string,
  status: number,
  headers: string,
  body: string,
  now: Date,
  expiresAt: Date,
];

/**
 * The insert that keeps a response under a key not yet taken, or whose time
 * ran out; a key still held changes no row. Its parameters, `KeptColumns`,
 * are numbered from `$first`, so that a creating statement can hold it too.
 */
export function insertKept(first: number) {
  const [sender, key, fingerprint, status, headers, body, now, expiresAt] = Array.from(
    { length: 8 },
    (_, i) => `$${first + i}`,
  );
  return `INSERT INTO idempotency_keys (sender, key, fingerprint, state, response_status, response_headers,
       response_body, created_at, expires_at)
     VALUES (${sender}, ${key}, ${fingerprint}, 'done', ${status}, ${headers}, ${body}, ${now}, ${expiresAt})
     ON CONFLICT (sender, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'done',
       response_status = excluded.response_status, response_headers = excluded.response_headers,
       response_body = excluded.response_body, created_at = excluded.created_at, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= ${now}`;
}

const statements = {
  /**
   * Takes the key for a request about to run: a new row, or one whose time
   * ran out (a kept response past its TTL, or a claim nobody renewed: its
   * holder died). The primary key (sender, key) makes this atomic across every
   * instance: of two requests with one key, exactly one gets a row back. The
   * claim's created_at tells this claim from a later one of the same key.
   */
  claim: statement<{ key: string }, [sender: string, key: string, fingerprint: string, now: Date, expiresAt: Date]>(
    "idempotency_claim",
    `INSERT INTO idempotency_keys (sender, key, fingerprint, state, created_at, expires_at)
     VALUES ($1, $2, $3, 'running', $4, $5)
     ON CONFLICT (sender, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running',
       response_status = NULL, response_headers = NULL, response_body = NULL,
       created_at = excluded.created_at, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= $4
     RETURNING key`,
  ),
  /** A claim still held by its request: its time extends (the request's heartbeat). */
  renew: statement<unknown, [sender: string, key: string, claimedAt: Date, expiresAt: Date]>(
    "idempotency_renew",
    `UPDATE idempotency_keys SET expires_at = $4
     WHERE sender = $1 AND key = $2 AND state = 'running' AND created_at = $3`,
  ),
  /**
   * Keeps a response under a key not yet taken (or whose time ran out), in
   * the transaction that made the response (meta `idempotency: "with-write"`).
   * A second request with the key waits on the first one's uncommitted row,
   * then finds it taken and changes no row.
   */
  keepNew: statement<unknown, KeptColumns>("idempotency_keep_new", insertKept(1)),
  find: statement<KeptRequest, [sender: string, key: string]>(
    "idempotency_find",
    `SELECT fingerprint, state, response_status, response_body, expires_at FROM idempotency_keys
     WHERE sender = $1 AND key = $2`,
  ),
  /** Keeps the response of the claim made at `claimedAt`; no row when that claim lapsed and was taken over. */
  keepClaimed: statement<
    unknown,
    [sender: string, key: string, claimedAt: Date, status: number, headers: string, body: string, expiresAt: Date]
  >(
    "idempotency_keep",
    `UPDATE idempotency_keys SET state = 'done', response_status = $4, response_headers = $5, response_body = $6,
       expires_at = $7
     WHERE sender = $1 AND key = $2 AND state = 'running' AND created_at = $3`,
  ),
  release: statement<unknown, [sender: string, key: string, claimedAt: Date]>(
    "idempotency_release",
    "DELETE FROM idempotency_keys WHERE sender = $1 AND key = $2 AND state = 'running' AND created_at = $3",
  ),
  // Served by idempotency_keys_expires_at_idx.
  purge: statement<unknown, [now: Date]>("idempotency_purge", "DELETE FROM idempotency_keys WHERE expires_at <= $1"),
};

/** Who holds a key, and for which request. */
export interface KeyHolder {
  sender: string;
  key: string;
  fingerprint: string;
}

/** The row `insertKept` writes: `response` kept under the holder's key from `now` for `ttlMs`. */
export function keptColumns(holder: KeyHolder, response: KeptResponse, now: Date, ttlMs: number): KeptColumns {
  const { sender, key, fingerprint } = holder;
  const { status, headers, body } = response;
  return [sender, key, fingerprint, status, JSON.stringify(headers), body, now, new Date(now.getTime() + ttlMs)];
}

/** A key claimed by a running request: who holds it, and when the claim was made. */
export interface Claim extends KeyHolder {
  claimedAt: Date;
}

export const idempotencyStore = {
  /** Claims the key for `holdMs` (renewed while the request runs); undefined when another request holds it. */
  async claim(db: Queryable, holder: KeyHolder, holdMs: number): Promise<Claim | undefined> {
    const now = new Date();
    const { sender, key, fingerprint } = holder;
    const row = await db.get(statements.claim, [sender, key, fingerprint, now, new Date(now.getTime() + holdMs)]);
    return row ? { ...holder, claimedAt: now } : undefined;
  },

  /** Extends a claim by `holdMs` from now; false when it lapsed and was taken over meanwhile. */
  async renew(db: Queryable, claim: Claim, holdMs: number): Promise<boolean> {
    const expiresAt = new Date(Date.now() + holdMs);
    return (await db.run(statements.renew, [claim.sender, claim.key, claim.claimedAt, expiresAt])) === 1;
  },

  find: (db: Queryable, sender: string, key: string) => db.get(statements.find, [sender, key]),

  /** Keeps `response` for the claim; false when the claim lapsed and another request took the key. */
  async keepClaimed(db: Queryable, claim: Claim, response: KeptResponse, ttlMs: number): Promise<boolean> {
    const { status, headers, body } = response;
    const expiresAt = new Date(Date.now() + ttlMs);
    const args = [claim.sender, claim.key, claim.claimedAt, status, JSON.stringify(headers), body, expiresAt] as const;
    return (await db.run(statements.keepClaimed, args)) === 1;
  },

  /** Keeps `response` under a key nobody holds; false when the key is taken. */
  async keepNew(db: Queryable, holder: KeyHolder, response: KeptResponse, ttlMs: number): Promise<boolean> {
    return (await db.run(statements.keepNew, keptColumns(holder, response, new Date(), ttlMs))) === 1;
  },

  release: (db: Queryable, claim: Claim) => db.run(statements.release, [claim.sender, claim.key, claim.claimedAt]),

  /** Deletes every key whose time ran out; returns how many. */
  purge: (db: Queryable, now = new Date()) => db.run(statements.purge, [now]),
};
