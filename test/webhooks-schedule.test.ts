import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { nextAttemptAt, shouldDisable } from "../src/modules/webhooks/delivery/retry-schedule.js";

const failedAt = new Date("2026-11-25T22:00:00.000Z");
const defaults = loadConfig({}).webhooks;

describe("WEBHOOK_RETRY_SCHEDULE", () => {
  it("defaults to 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
    expect(defaults.retrySchedule).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
  });

  it("takes seconds separated by commas, fractions and spaces included", () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "0.5, 1,2" }).webhooks.retrySchedule).toEqual([0.5, 1, 2]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "0" }).webhooks.retrySchedule).toEqual([0]);
  });

  it.each(["5,,300", "five", "5;300", "-1", "5,", "1e3", Array.from({ length: 51 }, () => "1").join(",")])(
    "refuses %j in one line naming it",
    (value) => {
      expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: value })).toThrow(
        "Invalid configuration: WEBHOOK_RETRY_SCHEDULE must be seconds separated by commas, such as 5,300,1800",
      );
    },
  );
});

describe("the next attempt", () => {
  it("follows the schedule after each failure, then there is none: 1 + 7 attempts by default", () => {
    const schedule = defaults.retrySchedule;
    const next = (attempt: number) => nextAttemptAt(schedule, attempt, failedAt)?.toISOString();
    expect(next(1)).toBe("2026-11-25T22:00:05.000Z");
    expect(next(2)).toBe("2026-11-25T22:05:00.000Z");
    expect(next(3)).toBe("2026-11-25T22:30:00.000Z");
    expect(next(4)).toBe("2026-11-26T00:00:00.000Z");
    expect(next(5)).toBe("2026-11-26T03:00:00.000Z");
    expect(next(6)).toBe("2026-11-26T08:00:00.000Z");
    expect(next(7)).toBe("2026-11-26T08:00:00.000Z");
    expect(next(8)).toBeUndefined();
    expect(next(9)).toBeUndefined();
  });

  it("counts from the failed attempt's time, to the millisecond", () => {
    const at = new Date("2026-11-25T22:00:00.250Z");
    expect(nextAttemptAt([0.5, 0.001], 1, at)?.toISOString()).toBe("2026-11-25T22:00:00.750Z");
    expect(nextAttemptAt([0.5, 0.001], 2, at)?.toISOString()).toBe("2026-11-25T22:00:00.251Z");
    expect(nextAttemptAt([0], 1, at)?.toISOString()).toBe("2026-11-25T22:00:00.250Z");
  });

  it("has no retry with an empty schedule, and refuses an attempt number below 1", () => {
    expect(nextAttemptAt([], 1, failedAt)).toBeUndefined();
    expect(() => nextAttemptAt([5], 0, failedAt)).toThrow(RangeError);
    expect(() => nextAttemptAt([5], 1.5, failedAt)).toThrow(RangeError);
  });
});

describe("WEBHOOK_DISABLE_AFTER_HOURS", () => {
  it("defaults to 120 and takes fractions; 0 turns it off; anything else is one line naming it", () => {
    expect(defaults.disableAfterHours).toBe(120);
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER_HOURS: "0.001" }).webhooks.disableAfterHours).toBe(0.001);
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER_HOURS: "0" }).webhooks.disableAfterHours).toBe(0);
    for (const value of ["-1", "soon", "100000"]) {
      expect(() => loadConfig({ WEBHOOK_DISABLE_AFTER_HOURS: value })).toThrow(
        /^Invalid configuration: WEBHOOK_DISABLE_AFTER_HOURS [^\n]+$/,
      );
    }
  });

  it("disables an endpoint once it has failed without a break for that long", () => {
    const hours = (h: number) => new Date(failedAt.getTime() + h * 3_600_000);
    expect(shouldDisable(failedAt, hours(119.99), 120)).toBe(false);
    expect(shouldDisable(failedAt, hours(120), 120)).toBe(true);
    expect(shouldDisable(failedAt, hours(500), 120)).toBe(true);
    expect(shouldDisable(null, hours(500), 120)).toBe(false);
    expect(shouldDisable(failedAt, hours(10_000), 0)).toBe(false);
  });
});

describe("WEBHOOK_TIMEOUT_SECONDS", () => {
  it("defaults to 10 s; up to 60; anything else is one line naming it", () => {
    expect(defaults.timeoutMs).toBe(10_000);
    expect(loadConfig({ WEBHOOK_TIMEOUT_SECONDS: "0.25" }).webhooks.timeoutMs).toBe(250);
    for (const value of ["0", "61", "ten"]) {
      expect(() => loadConfig({ WEBHOOK_TIMEOUT_SECONDS: value })).toThrow(
        /^Invalid configuration: WEBHOOK_TIMEOUT_SECONDS [^\n]+$/,
      );
    }
  });
});
