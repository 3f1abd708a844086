import { afterEach, describe, expect, it, vi } from "vitest";
import { createAttemptRate } from "../src/modules/webhooks/delivery/attempt-rate.js";

describe("the attempt rate", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("lets a tenth of a second's attempts start at once, then as many per second as allowed", () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const rate = createAttemptRate(100);
    expect(rate.available()).toBe(10);
    rate.take(10);
    expect(rate.available()).toBe(0);
    expect(rate.msUntilNext()).toBe(10);
    vi.advanceTimersByTime(50);
    expect(rate.available()).toBe(5);
    // Idle for long, it still allows only one burst at once.
    vi.advanceTimersByTime(10_000);
    expect(rate.available()).toBe(10);
  });

  it("is unbounded at 0", () => {
    const rate = createAttemptRate(0);
    rate.take(1_000_000);
    expect(rate.available()).toBe(Number.POSITIVE_INFINITY);
    expect(rate.msUntilNext()).toBe(0);
  });
});
