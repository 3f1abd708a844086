import { z } from "zod";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Nesting allowed in a task's `input` and `result`. */
export const maxJsonDepth = 100;
export const maxInputBytes = 64 * 1024;

/**
 * Whether arrays and objects in `value` nest more than `max` levels (a flat
 * object is 1). The recursion stops one level past `max`, so it is safe on
 * any value; JSON.stringify is not, it overflows the stack a few thousand
 * levels down.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (max <= 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (nestedDeeperThan(child, max - 1)) return true;
  }
  return false;
}

const isPlainObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);

/** UTF-8 bytes of the value as it is stored (JSON.stringify). */
export const serialisedBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

const tooDeep = `must not be nested more than ${maxJsonDepth} levels deep`;

/*
 * These schemas validate without copying: the value the client sent is stored
 * as it is, so key order and keys such as "__proto__" survive a round trip.
 */

/** Any JSON value (null included). */
export const jsonValue = (z.unknown() as z.ZodType<JsonValue>)
  .check((ctx) => {
    if (nestedDeeperThan(ctx.value, maxJsonDepth))
      ctx.issues.push({ code: "custom", input: ctx.value, message: tooDeep });
  })
  .meta({ description: `Any JSON value, nested at most ${maxJsonDepth} levels deep` });

/** A JSON object of at most `maxBytes` serialised. */
export const jsonObject = (maxBytes: number) =>
  (z.unknown() as z.ZodType<JsonObject>)
    .check((ctx) => {
      const value: unknown = ctx.value;
      const problem = !isPlainObject(value)
        ? "must be a JSON object"
        : nestedDeeperThan(value, maxJsonDepth)
          ? tooDeep
          : serialisedBytes(value) > maxBytes
            ? `must be at most ${maxBytes} bytes serialised`
            : undefined;
      if (problem) ctx.issues.push({ code: "custom", input: value, message: problem });
    })
    .meta({ type: "object", additionalProperties: true });
