/**
 * Counts failed logins per client address and per account, in this process's
 * memory: each instance behind a load balancer keeps its own counts, and a
 * restart forgets them. A key that reached its limit is refused, even with the
 * right password, until its oldest counted failure leaves the window.
 */
export interface ThrottleLimits {
  perAccount: number;
  perClient: number;
  windowMs: number;
  /** Bound on remembered keys; the least recently failed are forgotten first. */
  maxKeys: number;
}

export const defaultLimits: ThrottleLimits = { perAccount: 5, perClient: 20, windowMs: 15 * 60_000, maxKeys: 50_000 };

export class LoginThrottle {
  // Times of recent failures per key, oldest first, at most `limit` of them.
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limits: ThrottleLimits = defaultLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until this client may try this account again; 0 when it may now. */
  retryAfter(client: string, account: string): number {
    return Math.max(
      this.wait(`client:${client}`, this.limits.perClient),
      this.wait(`account:${account}`, this.limits.perAccount),
    );
  }

  recordFailure(client: string, account: string): void {
    this.record(`client:${client}`, this.limits.perClient);
    this.record(`account:${account}`, this.limits.perAccount);
  }

  /** A successful login clears the account's failures; the client's stay counted. */
  recordSuccess(account: string): void {
    this.failures.delete(`account:${account}`);
  }

  private recent(key: string): number[] {
    const cutoff = this.now() - this.limits.windowMs;
    return (this.failures.get(key) ?? []).filter((time) => time > cutoff);
  }

  private wait(key: string, limit: number): number {
    const recent = this.recent(key);
    const oldest = recent[0];
    if (recent.length < limit || oldest === undefined) return 0;
    return Math.max(1, Math.ceil((oldest + this.limits.windowMs - this.now()) / 1000));
  }

  private record(key: string, limit: number): void {
    const recent = [...this.recent(key), this.now()].slice(-limit);
    // Re-inserting keeps the map ordered by last failure, so eviction drops the stalest key.
    this.failures.delete(key);
    this.failures.set(key, recent);
    if (this.failures.size > this.limits.maxKeys) {
      const stalest = this.failures.keys().next().value;
      if (stalest !== undefined) this.failures.delete(stalest);
    }
  }
}
