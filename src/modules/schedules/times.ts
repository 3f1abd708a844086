import { Cron } from "croner";

/*
 * When a schedule runs (docs/api/schedules.md). A cron expression is parsed
 * and matched by croner, on the wall clock of the schedule's time zone; this
 * file maps those wall-clock times to instants with the daylight-saving
 * rules of the contract: a local time skipped by a change runs once, at the
 * first instant after the gap; a repeated local time runs once, at its first
 * occurrence.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** The wall clock of `timezone` at instant `t` (ms), written as the UTC instant with the same fields. */
function wallOf(timezone: string, t: number): number {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(timezone).formatToParts(new Date(t))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  return Date.UTC(year, month - 1, day, hour, minute, second) + (((t % 1000) + 1000) % 1000);
}

const offsetAt = (timezone: string, t: number) => wallOf(timezone, t) - t;

const DAY_MS = 86_400_000;

/**
 * The instant a wall-clock time stands for in `timezone`: the first of two
 * for a repeated time, the first instant after the gap for a skipped one.
 */
export function instantOfWall(timezone: string, wall: number): number {
  const before = offsetAt(timezone, wall - DAY_MS);
  const after = offsetAt(timezone, wall + DAY_MS);
  const valid = [...new Set([before, after])]
    .map((offset) => wall - offset)
    .filter((t) => wallOf(timezone, t) === wall);
  if (valid.length > 0) return Math.min(...valid);
  // A gap: the change happened between the instant read with the new offset and the one read with the old.
  let low = wall - Math.max(before, after);
  let high = wall - Math.min(before, after);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(timezone, middle) === offsetAt(timezone, high)) high = middle;
    else low = middle;
  }
  return high;
}

/** Whether `timezone` is an IANA time zone name this runtime knows. */
export function isTimeZone(timezone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(timezone)) return false;
  try {
    formatterOf(timezone);
    return true;
  } catch {
    return false;
  }
}

const crons = new Map<string, Cron>();

/** croner's reading of a five-field expression, matched on the wall clock (as UTC); throws when it is not one. */
export function cronOf(expression: string): Cron {
  let cron = crons.get(expression);
  if (!cron) {
    if (expression.trim().split(/\s+/).length !== 5) {
      throw new Error("must have five fields: minute hour day-of-month month day-of-week");
    }
    cron = new Cron(expression, { timezone: "Etc/UTC", paused: true });
    if (crons.size > 10_000) crons.clear();
    crons.set(expression, cron);
  }
  return cron;
}

/** The first run time of `expression` in `timezone` strictly after instant `after` (ms), or null when none is left. */
export function nextCronTime(expression: string, timezone: string, after: number): number | null {
  const cron = cronOf(expression);
  // Wall-clock times map to instants in order, and no time before the wall clock at `after` maps past it.
  let wall = wallOf(timezone, after) - 1;
  for (let i = 0; i < 1_000; i++) {
    let next: Date | null;
    try {
      next = cron.nextRun(new Date(wall));
    } catch {
      // Beyond the dates croner reads (the end of year 9999 and after): no run time.
      return null;
    }
    if (!next) return null;
    wall = next.getTime();
    const t = instantOfWall(timezone, wall);
    if (t > after) return t;
  }
  return null;
}
