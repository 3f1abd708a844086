import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { afterEach, describe, expect, it, vi } from "vitest";
import { coalescingCounter } from "../src/limits/coalesce.js";

/** A memory store that answers late, and records the points of each trip. */
function slowStore(points: number) {
  const store = new RateLimiterMemory({ points, duration: 60 });
  const trips: number[] = [];
  const consume = async (key: string, count: number): Promise<RateLimiterRes> => {
    trips.push(count);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return store.consume(key, count);
  };
  return { consume, trips };
}

describe("counts of one key made at once", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("go to the store together, and each caller still gets its own place: exactly the limit allowed", async () => {
    const { consume, trips } = slowStore(10);
    const count = coalescingCounter(consume, 10);
    const shares = await Promise.all(Array.from({ length: 25 }, () => count("sender", 1)));
    expect(trips.length).toBeLessThan(25);
    expect(trips.reduce((sum, n) => sum + n, 0)).toBe(25);
    expect(shares.filter((share) => share.allowed)).toHaveLength(10);
    // Each allowed count seen once: remaining 9, 8, …, 0, in the order the callers came.
    expect(shares.slice(0, 10).map((share) => share.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(shares.slice(10).every((share) => !share.allowed && share.remaining === 0)).toBe(true);
  });

  it("a caller counting several (a tRPC batch) is allowed all or nothing", async () => {
    const { consume } = slowStore(10);
    const count = coalescingCounter(consume, 10);
    const [first, batch, last] = await Promise.all([count("k", 8), count("k", 3), count("k", 1)]);
    expect(first).toMatchObject({ allowed: true, remaining: 2 });
    expect(batch).toMatchObject({ allowed: false, remaining: 0 });
    expect(last).toMatchObject({ allowed: false, remaining: 0 });
  });

  it("keys apart never wait for each other", async () => {
    const { consume, trips } = slowStore(2);
    const count = coalescingCounter(consume, 2);
    const [a, b] = await Promise.all([count("a", 1), count("b", 1)]);
    expect([a.allowed, b.allowed, trips]).toEqual([true, true, [1, 1]]);
  });

  it("a refusal without a count (the key blocked in memory until its window ends) refuses every caller", async () => {
    const count = coalescingCounter(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      throw new RateLimiterRes(0, 30_000);
    }, 10);
    const shares = await Promise.all([count("k", 1), count("k", 1), count("k", 1)]);
    expect(shares).toEqual(Array(3).fill({ allowed: false, remaining: 0, msBeforeNext: 30_000 }));
  });

  it("a store failure fails every caller of the trip, and the next trip goes out", async () => {
    let fail = true;
    const count = coalescingCounter(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (fail) throw new Error("down");
      return { consumedPoints: 1, remainingPoints: 9, msBeforeNext: 1000, isFirstInDuration: true } as RateLimiterRes;
    }, 10);
    const outcomes = await Promise.allSettled([count("k", 1), count("k", 1)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    expect(await count("k", 1)).toMatchObject({ allowed: true, remaining: 9 });
  });

  it("with a gap, a busy key's trips start that far apart and carry every count made meanwhile, each in its place", async () => {
    // On the test's own clock: on a busy machine, a real clock read a statement after the trip started can be late.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const store = new RateLimiterMemory({ points: 1000, duration: 60 });
    const starts: number[] = [];
    const trips: number[] = [];
    const count = coalescingCounter(
      async (key, points) => {
        starts.push(performance.now());
        trips.push(points);
        return store.consume(key, points);
      },
      1000,
      20,
    );
    // One count a millisecond for 100 ms.
    const pending: Promise<{ remaining: number }>[] = [];
    for (let n = 0; n < 100; n++) {
      pending.push(count("busy", 1));
      await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(20);
    const shares = await Promise.all(pending);
    expect(trips.reduce((sum, n) => sum + n, 0)).toBe(100);
    expect(trips).toEqual([1, 19, 20, 20, 20, 20]);
    const gaps = starts.slice(1).map((at, n) => at - (starts[n] as number));
    expect(gaps).toEqual([20, 20, 20, 20, 20]);
    expect(shares.map((share) => share.remaining)).toEqual(Array.from({ length: 100 }, (_, n) => 999 - n));
    // A lone count goes at once: no time passes before it is answered.
    const before = performance.now();
    await count("quiet", 1);
    expect(performance.now()).toBe(before);
  });
});
