import { z } from "zod";

const codePoints = (value: string) => {
  let count = 0;
  for (const _ of value) count++;
  return count;
};

/**
 * A text field whose length counts Unicode code points (docs/http.md). Lone
 * surrogates and U+0000 are rejected: neither database can store them faithfully.
 */
export const text = (min: number, max: number) =>
  z
    .string()
    .check((ctx) => {
      const value = ctx.value;
      if (!value.isWellFormed()) {
        ctx.issues.push({ code: "custom", input: value, message: "must be well-formed Unicode (no lone surrogates)" });
      } else if (value.includes("\u0000")) {
        ctx.issues.push({ code: "custom", input: value, message: "must not contain U+0000" });
      } else {
        const length = codePoints(value);
        if (length < min)
          ctx.issues.push({
            code: "custom",
            input: value,
            message: `must have at least ${min} character${min === 1 ? "" : "s"}`,
          });
        if (length > max)
          ctx.issues.push({ code: "custom", input: value, message: `must have at most ${max} characters` });
      }
    })
    .meta({ minLength: min, maxLength: max });

/** Any string names a resource: one that is not a UUID simply matches nothing (404). */
export const resourceId = (description: string) =>
  z.string().meta({ description, format: "uuid", example: "4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69" });

/** A time the service answers: UTC, to the millisecond (`…T…Z`), within years 0001–9999. */
export const timestamp = z.iso.datetime().meta({ example: "2026-11-25T22:39:57.123Z" });

/**
 * The instant a date-time a client sent stands for, to the millisecond:
 * digits past the millisecond are dropped, so the stored time is the
 * millisecond the given time falls in (Date.parse itself only promises
 * three digits).
 */
export const instantOf = (dateTime: string): Date =>
  new Date(dateTime.replace(/\.(\d+)/, (_, digits: string) => `.${digits.slice(0, 3).padEnd(3, "0")}`));

/** Whether `dateTime` says more than its millisecond: a non-zero digit past the third of its fraction. */
export const pastMillisecond = (dateTime: string): boolean => /[1-9]/.test(/\.\d{3}(\d+)/.exec(dateTime)?.[1] ?? "");

// What both databases store and `timestamp` answers: a PostgreSQL `timestamp`
// goes further, but SQLite's text only sorts as time with four-digit years,
// and an ISO string outside them is no longer `…T…Z`.
const earliest = Date.parse("0001-01-01T00:00:00.000Z");
const latest = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * Every date-time the API reads, in a body or a query (docs/http.md,
 * Conventions): ISO 8601 with seconds and `Z` or an offset, which once in UTC
 * lies within years 0001–9999. Whatever it accepts is stored by both
 * databases and answered as a `timestamp`, so no write ever commits behind a
 * failing answer.
 */
export const dateTime = z.iso
  .datetime({ offset: true, abort: true })
  .check((ctx) => {
    const at = instantOf(ctx.value).getTime();
    if (!(at >= earliest && at <= latest)) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        message: "must lie within years 0001–9999 once converted to UTC",
      });
    }
  })
  .meta({ description: "ISO 8601 date-time with a zone", example: "2026-11-25T23:00:00Z" });

/** docs/http.md: 1 on creation, +1 on every write; the resource's ETag. */
export const version = z.int().min(1).meta({ description: "1 on creation, +1 on every write", example: 1 });

/** docs/http.md: string keys to string values, `{}` by default. */
export const metadata = z
  .record(z.string(), z.string())
  .meta({ description: "String keys to string values", example: { team: "research" } });

export const pagination = {
  skip: z.int().min(0).default(0).meta({ description: "Number of items to skip" }),
  limit: z.int().min(1).max(1000).default(100).meta({ description: "Maximum number of items to return" }),
};

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => uuidPattern.test(value);

/**
 * A check for PATCH inputs: at least one of `fields` must be present, so an
 * empty body (or one with only unknown fields, which are stripped) is a 400.
 */
export const atLeastOneOf =
  (fields: readonly string[]) =>
  (ctx: { value: Record<string, unknown>; issues: z.core.$ZodRawIssue[] }): void => {
    if (fields.some((field) => ctx.value[field] !== undefined)) return;
    ctx.issues.push({
      code: "custom",
      input: ctx.value,
      message: `must contain at least one of: ${fields.join(", ")}`,
    });
  };

/**
 * A number in a request body, with JSON's types kept strict. trpc-to-openapi
 * switches coercion on for every number of an input schema, bodies included
 * (null → 0, "7" → 7, true → 1, [3] → 3), but leaves pipes alone: piping
 * into a plain number, which changes nothing else, keeps JSON's types strict.
 */
export const bodyNumber = (schema: z.ZodNumber) => schema.pipe(z.number());
