// Date-time strings around the edges of what the service stores (docs/http.md,
// Conventions: ISO 8601 with seconds and `Z` or an offset, years 0001–9999
// once in UTC), and what each stands for, worked out here on its own rather
// than by the code under test.
import fc from "fast-check";

/** A date-time as a client might write it, each part free to be out of bounds. */
export interface DateParts {
  year: number;
  month: number;
  day: number;
  separator: string;
  hour: number;
  minute: number;
  /** undefined: no seconds at all. */
  second: number | undefined;
  /** The digits after the decimal point; "" for none. */
  fraction: string;
  zone: string;
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

const digits = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength, maxLength });

/** Mostly what the format allows, now and then a value it does not. */
const mostly = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: invalid });

const offset = fc
  .record({
    sign: fc.constantFrom("+", "-"),
    hours: mostly(fc.oneof(fc.constantFrom(0, 1, 13, 14, 14, 23), fc.integer({ min: 0, max: 23 })), fc.constant(24)),
    minutes: mostly(fc.constantFrom(0, 0, 0, 30, 45, 59), fc.constant(60)),
    form: mostly(fc.constant("hh:mm"), fc.constantFrom("hhmm", "hh")),
  })
  .map(({ sign, hours, minutes, form }) =>
    form === "hh"
      ? `${sign}${pad(hours, 2)}`
      : `${sign}${pad(hours, 2)}${form === "hhmm" ? "" : ":"}${pad(minutes, 2)}`,
  );

/** A day of the year: mostly its first or last, where an offset crosses into the next or previous year. */
type MonthDay = [month: number, day: number];
const monthDay = mostly<MonthDay>(
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom<MonthDay>([1, 1], [12, 31]) },
    { weight: 1, arbitrary: fc.constantFrom<MonthDay>([2, 28], [2, 29], [4, 30]) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 })) },
  ),
  fc.constantFrom<MonthDay>([0, 1], [13, 1], [1, 0], [1, 32], [2, 30], [4, 31]),
);

/** Parts that reach the edges: years 0000, 0001, 9999, 10000, offsets to ±14:00 and past, `:60`, 0–9 fraction digits, lowercase. */
export const dateCase: fc.Arbitrary<DateParts> = fc
  .record({
    year: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(0, 1, 9999) },
      { weight: 2, arbitrary: fc.constantFrom(2, 1969, 1970, 2026, 9998) },
      { weight: 1, arbitrary: fc.constant(10000) },
      { weight: 2, arbitrary: fc.integer({ min: 0, max: 9999 }) },
    ),
    monthDay,
    separator: mostly(fc.constant("T"), fc.constantFrom("t", " ")),
    hour: mostly(fc.oneof(fc.constantFrom(0, 23), fc.integer({ min: 0, max: 23 })), fc.constant(24)),
    minute: mostly(fc.oneof(fc.constantFrom(0, 59), fc.integer({ min: 0, max: 59 })), fc.constant(60)),
    second: mostly<number | undefined>(
      fc.oneof(fc.constantFrom(0, 59), fc.integer({ min: 0, max: 59 })),
      fc.constantFrom(60, undefined),
    ),
    fraction: fc.oneof(
      { weight: 2, arbitrary: fc.constant("") },
      { weight: 3, arbitrary: digits(1, 9) },
      { weight: 2, arbitrary: fc.integer({ min: 1, max: 9 }).map((n) => "9".repeat(n)) },
      { weight: 1, arbitrary: fc.integer({ min: 4, max: 9 }).map((n) => `${"0".repeat(n - 1)}1`) },
    ),
    zone: fc.oneof(
      { weight: 3, arbitrary: mostly(fc.constantFrom("Z", "+00:00", "-00:00", "+14:00", "-14:00"), fc.constant("z")) },
      { weight: 4, arbitrary: offset },
    ),
  })
  .map(({ monthDay: [month, day], ...parts }) => ({ ...parts, month, day }) as DateParts);

export const dateString = (p: DateParts) =>
  `${pad(p.year, 4)}-${pad(p.month, 2)}-${pad(p.day, 2)}${p.separator}${pad(p.hour, 2)}:${pad(p.minute, 2)}` +
  `${p.second === undefined ? "" : `:${pad(p.second, 2)}`}${p.fraction === "" ? "" : `.${p.fraction}`}${p.zone}`;

const leap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const daysIn = (year: number, month: number) =>
  month === 2 ? (leap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/** Milliseconds since the epoch of a UTC calendar time (years below 100 included, which Date.UTC would move). */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number) {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

const earliest = utc(1, 1, 1, 0, 0, 0, 0);
const latest = utc(9999, 12, 31, 23, 59, 59, 999);

/** Whether the text is in the format: `YYYY-MM-DDThh:mm:ss`, a fraction or none, `Z` or `±hh:mm`; a real day. */
function wellFormed(p: DateParts): boolean {
  const zone = /^(?:Z|[+-](\d\d):(\d\d))$/.exec(p.zone);
  return (
    p.year <= 9999 &&
    p.month >= 1 &&
    p.month <= 12 &&
    p.day >= 1 &&
    p.day <= daysIn(p.year, p.month) &&
    p.separator === "T" &&
    p.hour <= 23 &&
    p.minute <= 59 &&
    p.second !== undefined &&
    p.second <= 59 &&
    zone !== null &&
    (zone[1] === undefined || (Number(zone[1]) <= 23 && Number(zone[2]) <= 59))
  );
}

/** The instant, in milliseconds, a well-formed date-time stands for: the millisecond it falls in. */
function instant(p: DateParts): number {
  const ms = Number(p.fraction.slice(0, 3).padEnd(3, "0"));
  const sign = p.zone.startsWith("-") ? -1 : 1;
  const offsetMinutes = p.zone === "Z" ? 0 : sign * (Number(p.zone.slice(1, 3)) * 60 + Number(p.zone.slice(4, 6)));
  return utc(p.year, p.month, p.day, p.hour, p.minute, p.second ?? 0, ms) - offsetMinutes * 60_000;
}

/**
 * What the service must answer for this date-time: the stored instant as the
 * API writes it (UTC, the millisecond the time falls in), or undefined when it
 * must be refused (not the format, or outside years 0001–9999 once in UTC).
 */
export function expectedInstant(p: DateParts): string | undefined {
  if (!wellFormed(p)) return undefined;
  const at = instant(p);
  return at >= earliest && at <= latest ? new Date(at).toISOString() : undefined;
}

/** Date-time strings at the edges, as text only. */
export const edgeDateTime = dateCase.map(dateString);

/** Date-time strings in the format whose instant lies outside years 0001–9999: the ones only the range refuses. */
export const outOfRangeDateTime = dateCase
  .filter((parts) => wellFormed(parts) && expectedInstant(parts) === undefined)
  .map(dateString);
