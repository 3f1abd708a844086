import { type RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../../errors.js";
import type { CounterStore } from "../../limits/counter-store.js";
import { tooManyLoginFailures } from "./credential-errors.js";

/**
 * Failed logins allowed per window: for one account from one client address
 * (the bound a guesser meets), and the looser bounds on one account from
 * anywhere and on one address whatever the account (so failures from one
 * address never lock the right password out for everyone behind it).
 */
export const loginLimits = { perAccountAndClient: 5, perAccount: 20, perClient: 100, windowSeconds: 15 * 60 };

/** An attempt that holds its place in every count until it is settled. */
export interface LoginReservation {
  /** The password was right: this attempt was no failure, and the pair's earlier failures are forgiven. */
  succeeded(): Promise<void>;
  /** The password could not be checked (the database failed): the attempt gives its place back. */
  unchecked(): Promise<void>;
}

const throttleUnavailable = () =>
  new AppError("unavailable", "Logins cannot be checked right now; retry shortly", undefined, { "Retry-After": "1" });

/**
 * The login throttle as reservations: an attempt takes its place in the
 * counts atomically (one upsert on PostgreSQL, one message to the cluster's
 * primary on SQLite) before any password is hashed, so attempts still being
 * checked count too, and every instance sees the same counts. A failure keeps
 * its place until the window ends; a success gives it back.
 */
export class LoginThrottle {
  private readonly counters: { name: string; counter: RateLimiterAbstract }[];
  /** Per pair, the last pending count in this process (so the next one waits its turn) and how many are pending. */
  private readonly pairTurns = new Map<string, { last: Promise<unknown>; pending: number }>();
  /** Pairs the counts refused, until when: refused again from memory, without a count or a turn to wait for. */
  private readonly refusedPairs = new Map<string, number>();

  constructor(
    store: CounterStore,
    private readonly limits = loginLimits,
  ) {
    const counter = (keyPrefix: string, points: number) =>
      store({ keyPrefix, points, durationSeconds: limits.windowSeconds });
    // In this order: an attempt refused for its pair never touches the account's
    // count, so a guesser's refused flood cannot spend the account's looser bound.
    this.counters = [
      { name: "pair", counter: counter("login-pair", limits.perAccountAndClient) },
      { name: "client", counter: counter("login-client", limits.perClient) },
      { name: "account", counter: counter("login-account", limits.perAccount) },
    ];
  }

  /** Takes a place for this attempt, or throws 429 (a bound is reached) or 503 (the counts cannot be reached). */
  async reserve(client: string, account: string): Promise<LoginReservation> {
    const keys = { pair: `${client} ${account}`, client, account } as Record<string, string>;
    const refusedUntil = this.refusedPairs.get(keys.pair as string) ?? 0;
    if (refusedUntil > Date.now())
      throw tooManyLoginFailures(Math.max(1, Math.ceil((refusedUntil - Date.now()) / 1000)));
    const taken: { counter: RateLimiterAbstract; key: string }[] = [];
    for (const { name, counter } of this.counters) {
      const key = keys[name] as string;
      try {
        await (name === "pair" ? this.inTurn(key, () => counter.consume(key)) : counter.consume(key));
        taken.push({ counter, key });
      } catch (outcome) {
        await Promise.allSettled(taken.map((p) => p.counter.reward(p.key)));
        if (outcome instanceof RateLimiterRes) {
          if (name === "pair") this.refuse(key, outcome.msBeforeNext);
          throw tooManyLoginFailures(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
        }
        throw throttleUnavailable();
      }
    }
    const giveBack = (places: typeof taken) => Promise.allSettled(places.map((p) => p.counter.reward(p.key)));
    return {
      succeeded: async () => {
        const [pair, ...others] = taken;
        this.refusedPairs.delete(keys.pair as string);
        await Promise.allSettled([pair?.counter.delete(pair.key), giveBack(others)]);
      },
      unchecked: async () => {
        await giveBack(taken);
      },
    };
  }

  /**
   * Remembers a refused pair until its window lets it in again. A success
   * elsewhere (another process) that forgives the pair is not seen here, so
   * the pair stays refused by this process until then: the safe side.
   */
  private refuse(pair: string, msBeforeNext: number) {
    const now = Date.now();
    // Forgets pairs whose time has passed, so many guessers cannot grow the map without end.
    if (this.refusedPairs.size >= 10_000) {
      for (const [key, until] of this.refusedPairs) if (until <= now) this.refusedPairs.delete(key);
    }
    if (this.refusedPairs.size < 10_000) this.refusedPairs.set(pair, now + msBeforeNext);
  }

  /**
   * A burst of attempts for one pair is counted one after another in this
   * process: once one is refused, the store refuses the rest from memory
   * (see counterStore), so a flood of guesses costs a handful of queries
   * instead of one each. An attempt that finds as many attempts of its pair
   * already pending as the pair may make in a window cannot be allowed
   * whatever they turn out to be, so it is refused at once instead of
   * holding a request slot while it waits its turn.
   */
  private inTurn<T>(key: string, count: () => Promise<T>): Promise<T> {
    const turn = this.pairTurns.get(key) ?? { last: Promise.resolve(), pending: 0 };
    if (turn.pending >= this.limits.perAccountAndClient) {
      return Promise.reject(new RateLimiterRes(0, this.limits.windowSeconds * 1000));
    }
    const counted = turn.last.then(count, count);
    const settled = counted.then(
      () => undefined,
      () => undefined,
    );
    turn.last = settled;
    turn.pending++;
    this.pairTurns.set(key, turn);
    void settled.then(() => {
      turn.pending--;
      if (turn.pending === 0 && this.pairTurns.get(key) === turn) this.pairTurns.delete(key);
    });
    return counted;
  }
}
