/**
 * A token bucket for delivery attempts: at most `perSecond` on average,
 * and a tenth of a second's worth at once. Each attempt costs this process
 * about a millisecond of CPU (bench/README.md, (j)), so the rate bounds the
 * share of a core that delivery takes from the API. 0: unbounded.
 */
export interface AttemptRate {
  /** Whole attempts that may start now. */
  available(): number;
  take(count: number): void;
  /** Milliseconds until one more attempt may start. */
  msUntilNext(): number;
}

export function createAttemptRate(perSecond: number): AttemptRate {
  if (perSecond <= 0) {
    return { available: () => Number.POSITIVE_INFINITY, take: () => {}, msUntilNext: () => 0 };
  }
  const burst = Math.max(1, perSecond / 10);
  let tokens = burst;
  let at = performance.now();
  const refill = () => {
    const now = performance.now();
    tokens = Math.min(burst, tokens + ((now - at) * perSecond) / 1000);
    at = now;
  };
  return {
    available() {
      refill();
      return Math.floor(tokens);
    },
    take(count) {
      refill();
      tokens -= count;
    },
    msUntilNext() {
      refill();
      return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) * 1000) / perSecond);
    },
  };
}
