import { RateLimiterRes } from "rate-limiter-flexible";

/** One caller's share of a count: whether it is within the limit, what remains after it, when the window ends. */
export interface Share {
  allowed: boolean;
  remaining: number;
  msBeforeNext: number;
}

/** Beyond this many keys with a recent trip, those whose gap has passed are forgotten. */
const REMEMBERED_KEYS = 10_000;

interface Waiter {
  points: number;
  resolve: (share: Share) => void;
  reject: (error: unknown) => void;
}

/**
 * Counts against one store with at most one trip on its way per key: the
 * counts of a key made while its trip is out wait, and go together as one
 * count of their sum on the next trip. A sender with many requests at once
 * (the one a limit is for) then costs a round trip per batch rather than per
 * request, on PostgreSQL and over the cluster's IPC alike. With `gapMs`, a
 * key's trips start at least that far apart, so a busy sender's batches grow
 * beyond what one round trip gathers; a count after a quiet spell still goes
 * at once.
 *
 * Each caller still gets its own exact place in the window: the store adds
 * the batch's sum atomically and answers the total, so the callers of a batch
 * are, in the order they came, the last `n` counts up to that total. Those at
 * or under `limit` are allowed, the rest refused, exactly as if each had been
 * counted alone in that order. A store failure fails every caller of the batch.
 */
export function coalescingCounter(
  consume: (key: string, points: number) => Promise<RateLimiterRes>,
  limit: number,
  /** Trips of one key start at least this far apart: while counts keep coming, each trip takes more of them. */
  gapMs = 0,
) {
  const queued = new Map<string, Waiter[]>();
  const outFor = new Set<string>();

  const shares = (waiters: Waiter[], total: number, msBeforeNext: number) => {
    let after = waiters.reduce((sum, waiter) => sum + waiter.points, 0);
    for (const waiter of waiters) {
      // This caller's count: the total less what the callers after it added.
      const counted = total - after + waiter.points;
      after -= waiter.points;
      waiter.resolve({ allowed: counted <= limit, remaining: Math.max(limit - counted, 0), msBeforeNext });
    }
  };

  /** When each key's last trip started, while that is within `gapMs`. */
  const lastStart = new Map<string, number>();
  const remember = (key: string, at: number) => {
    lastStart.set(key, at);
    if (lastStart.size <= REMEMBERED_KEYS) return;
    for (const [other, started] of lastStart) if (started + gapMs <= at) lastStart.delete(other);
  };

  /** Sends the key's waiting counts now, or once `gapMs` has passed since its last trip; they are out meanwhile. */
  function schedule(key: string) {
    outFor.add(key);
    const wait = (lastStart.get(key) ?? Number.NEGATIVE_INFINITY) + gapMs - performance.now();
    if (wait > 0) setTimeout(() => send(key), Math.ceil(wait));
    else send(key);
  }

  function send(key: string) {
    const waiters = queued.get(key) ?? [];
    queued.delete(key);
    if (gapMs > 0) remember(key, performance.now());
    const points = waiters.reduce((sum, waiter) => sum + waiter.points, 0);
    consume(key, points)
      .then(
        (res) => shares(waiters, res.consumedPoints, res.msBeforeNext),
        (outcome: unknown) => {
          if (!(outcome instanceof RateLimiterRes)) {
            for (const waiter of waiters) waiter.reject(outcome);
          } else if (outcome.consumedPoints > limit) {
            shares(waiters, outcome.consumedPoints, outcome.msBeforeNext);
          } else {
            // Refused without a count (the key is blocked in memory until its window ends): every caller is over.
            for (const waiter of waiters)
              waiter.resolve({ allowed: false, remaining: 0, msBeforeNext: outcome.msBeforeNext });
          }
        },
      )
      .finally(() => {
        outFor.delete(key);
        if (queued.has(key)) schedule(key);
      });
  }

  return (key: string, points: number) =>
    new Promise<Share>((resolve, reject) => {
      const waiters = queued.get(key);
      if (waiters) waiters.push({ points, resolve, reject });
      else queued.set(key, [{ points, resolve, reject }]);
      if (!outFor.has(key)) schedule(key);
    });
}
