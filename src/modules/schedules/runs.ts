import { instantOf } from "../../resources/schemas.js";
import type { ScheduleRow } from "./sql.js";
import { nextCronTime } from "./times.js";

/** What decides a schedule's run times: its clock, its window, and whether it is paused. */
export interface Clock {
  cron: string | null;
  every_seconds: number | null;
  timezone: string;
  paused: boolean;
  start_at: string | null;
  end_at: string | null;
  created_at: string;
}

const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");
const ms = (iso: string | null) => (iso === null ? null : instantOf(iso).getTime());

/**
 * The first run time strictly after `after` (ms), or null: paused, past
 * end_at, or no time left. An interval counts from start_at (its first run),
 * or else from the schedule's creation.
 */
export function nextRunAfter(clock: Clock, after: number): number | null {
  if (clock.paused) return null;
  const startAt = ms(clock.start_at);
  const endAt = ms(clock.end_at);
  let next: number | null;
  if (clock.every_seconds !== null) {
    const every = clock.every_seconds * 1000;
    const anchor = startAt ?? (ms(clock.created_at) as number);
    next = after < anchor ? anchor : anchor + (Math.floor((after - anchor) / every) + 1) * every;
  } else {
    const from = startAt !== null && startAt - 1 > after ? startAt - 1 : after;
    next = nextCronTime(clock.cron as string, clock.timezone, from);
  }
  // No run time past end_at, nor past the last instant the API can show (docs/http.md: years 0001–9999).
  if (next === null || (endAt !== null && next > endAt) || next > LAST_INSTANT) return null;
  return next;
}

/** How late a run time may be taken up and still count as on time rather than missed (catch_up none). */
export const MISSED_AFTER_MS = 5_000;
const MAX_STEPS = 10_000;

/**
 * The run times due at `now` from `row.next_run_at` on: the latest of them
 * (the one a run creates a task for), how many earlier ones are passed over,
 * and the next run time after them.
 */
export function dueRuns(row: ScheduleRow, now: number): { latest: number; passed: number; next: number | null } {
  let latest = instantOf(row.next_run_at as string).getTime();
  let passed = 0;
  let next = nextRunAfter(row, latest);
  while (next !== null && next <= now) {
    passed++;
    latest = next;
    // A long downtime of a frequent schedule: jump to the last day rather than walk every run time.
    if (passed === MAX_STEPS && now - latest > 86_400_000) {
      const near = nextRunAfter(row, now - 86_400_000);
      if (near !== null && near <= now) latest = near;
    }
    next = nextRunAfter(row, latest);
  }
  return { latest, passed, next };
}

/** The task's deadline from a run time. */
export const deadlineOf = (template: { deadline_seconds: number | null }, runAt: number) =>
  template.deadline_seconds === null ? null : new Date(runAt + template.deadline_seconds * 1000);
