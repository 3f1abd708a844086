import { type RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../errors.js";
import type { CounterStore } from "../limits/store.js";
import { tooManyLoginFailures } from "./errors.js";

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
  /** The last pending count of each pair in this process, so the next one waits its turn. */
  private readonly pairTurns = new Map<string, Promise<unknown>>();

  constructor(store: CounterStore, limits = loginLimits) {
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
    const taken: { counter: RateLimiterAbstract; key: string }[] = [];
    for (const { name, counter } of this.counters) {
      const key = keys[name] as string;
      try {
        await (name === "pair" ? this.inTurn(key, () => counter.consume(key)) : counter.consume(key));
        taken.push({ counter, key });
      } catch (outcome) {
        await Promise.allSettled(taken.map((p) => p.counter.reward(p.key)));
        if (outcome instanceof RateLimiterRes) {
          throw tooManyLoginFailures(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
        }
        throw throttleUnavailable();
      }
    }
    const giveBack = (places: typeof taken) => Promise.allSettled(places.map((p) => p.counter.reward(p.key)));
    return {
      succeeded: async () => {
        const [pair, ...others] = taken;
        await Promise.allSettled([pair?.counter.delete(pair.key), giveBack(others)]);
      },
      unchecked: async () => {
        await giveBack(taken);
      },
    };
  }

  /**
   * A burst of attempts for one pair is counted one after another in this
   * process: once one is refused, the store refuses the rest from memory
   * (see counterStore), so a flood of guesses costs a handful of queries
   * instead of one each, and is refused at once instead of queueing for the
   * counter's connections.
   */
  private inTurn<T>(key: string, count: () => Promise<T>): Promise<T> {
    const counted = (this.pairTurns.get(key) ?? Promise.resolve()).then(count, count);
    const settled = counted.then(
      () => undefined,
      () => undefined,
    );
    this.pairTurns.set(key, settled);
    void settled.then(() => {
      if (this.pairTurns.get(key) === settled) this.pairTurns.delete(key);
    });
    return counted;
  }
}
