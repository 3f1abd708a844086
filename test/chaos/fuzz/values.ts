// Values a JSON schema accepts, as fast-check arbitraries: the "right shape"
// half of the fuzzer (hostile.ts is the other half).
import fc from "fast-check";
import { dateCase, dateString, edgeDateTime, expectedInstant, outOfRangeDateTime } from "../../helpers/dates.js";
import { resolve, type Schema, type ServedDocument } from "./document.js";

/** Strings the contract accepts: well-formed Unicode without NUL (docs/http.md). */
const text = (minLength: number, maxLength: number) =>
  fc
    .oneof(
      { weight: 4, arbitrary: fc.string({ minLength, maxLength, unit: "grapheme-ascii" }) },
      { weight: 1, arbitrary: fc.string({ minLength, maxLength, unit: "binary" }) },
      { weight: 1, arbitrary: fc.string({ minLength, maxLength, unit: "grapheme" }) },
    )
    .filter((s) => !s.includes("\u0000") && [...s].length >= minLength && [...s].length <= maxLength);

// Far in the future, so that a deadline_at the fuzzer sets never comes due while it runs (the
// service's own settling would then change rows in the middle of the data-change check).
const futureDate = fc
  .date({ min: new Date("2100-01-01T00:00:00Z"), max: new Date("2199-12-31T23:59:59Z"), noInvalidDate: true })
  .map((d) => d.toISOString());

/**
 * As often as not, a date at the edges of what the service stores (docs/http.md, Conventions):
 * years 0000, 0001, 9999 and 10000 through offsets, offsets to ±14:00 and past, leap seconds,
 * digits past the millisecond, lowercase; among them dates in the format that lie outside years
 * 0001–9999 once in UTC. Most are refused; an accepted one may lie in the far past, which a run_at
 * or a list filter may well do.
 */
const dateTime = fc.oneof(
  { weight: 2, arbitrary: futureDate },
  { weight: 1, arbitrary: edgeDateTime },
  { weight: 1, arbitrary: outOfRangeDateTime },
);

/** A deadline at an edge is one the service refuses or one past 2100: a passed deadline is settled. */
const deadline = fc.oneof(
  { weight: 2, arbitrary: futureDate },
  { weight: 1, arbitrary: dateCase.filter((parts) => (expectedInstant(parts) ?? "9999") >= "2100").map(dateString) },
  { weight: 1, arbitrary: outOfRangeDateTime },
);

/**
 * Fields that start the service's own timers, kept where those timers stay out of the run: a
 * long poll that would hold the (sequential) fuzzer for up to 20 s, a lease or a deadline that
 * would expire (and be settled by the service, changing rows) in the middle of it.
 */
const timed: Record<string, fc.Arbitrary<unknown>> = {
  wait_seconds: fc.constant(0),
  duration_seconds: fc.integer({ min: 1800, max: 3600 }),
  deadline_at: fc.option(deadline, { nil: null, freq: 4 }),
};

/** A value for the property of this name: a timed one as above, else any the schema accepts. */
export function propertyValue(
  document: ServedDocument,
  name: string,
  schema: Schema,
  depth = 0,
): fc.Arbitrary<unknown> {
  return timed[name] ?? acceptedValue(document, schema, depth);
}

export function acceptedValue(document: ServedDocument, raw: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(document, raw);
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((s) => acceptedValue(document, s, depth)));
  if (Array.isArray(schema.type)) {
    return fc.oneof(...(schema.type as string[]).map((type) => acceptedValue(document, { ...schema, type }, depth)));
  }
  switch (schema.type) {
    case "string":
      return stringOf(schema);
    case "integer": {
      const min = Math.max(Number(schema.minimum ?? -1e6), Number.MIN_SAFE_INTEGER);
      const max = Math.min(Number(schema.maximum ?? 1e6), Number.MAX_SAFE_INTEGER);
      return fc.oneof(fc.integer({ min, max: Math.min(max, min + 1000) }), fc.constantFrom(min, max));
    }
    case "number":
      return fc.double({ min: Number(schema.minimum ?? -1e6), max: Number(schema.maximum ?? 1e6), noNaN: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const items = schema.items
        ? acceptedValue(document, schema.items as Schema, depth + 1)
        : fc.jsonValue({ maxDepth: 2 });
      const minLength = Number(schema.minItems ?? 0);
      return fc.array(items, { minLength, maxLength: Math.max(minLength, Math.min(Number(schema.maxItems ?? 4), 4)) });
    }
    case "object":
      return objectOf(document, schema, depth);
    default:
      // No type: any JSON (a task's `result`).
      return fc.jsonValue({ maxDepth: 3 });
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === "uuid") return fc.uuid({ version: 4 });
  if (schema.format === "date-time") return dateTime;
  const minLength = Number(schema.minLength ?? 0);
  const maxLength = Number(schema.maxLength ?? 60);
  if (typeof schema.pattern === "string") {
    const pattern = new RegExp(schema.pattern);
    return fc.stringMatching(pattern).filter((s) => s.length >= minLength && s.length <= maxLength);
  }
  // Mostly short, sometimes exactly the longest allowed.
  return fc.oneof(
    { weight: 5, arbitrary: text(minLength, Math.min(maxLength, Math.max(minLength, 30))) },
    { weight: 1, arbitrary: text(maxLength, maxLength) },
  );
}

function objectOf(document: ServedDocument, schema: Schema, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required ?? []) as string[];
  if (Object.keys(properties).length === 0) {
    const values = schema.additionalProperties;
    if (typeof values === "object" && values !== null) {
      // A map (metadata): keys as propertyNames says, values of the given schema.
      const keys = schema.propertyNames ? stringOf(resolve(document, schema.propertyNames as Schema)) : text(1, 20);
      const maxKeys = Math.min(Number(schema.maxProperties ?? 5), 5);
      return fc.dictionary(keys, acceptedValue(document, values as Schema, depth + 1), { maxKeys });
    }
    // A free-form object (a task's `input`).
    return depth > 2 ? fc.constant({}) : fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }));
  }
  const model = Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [name, propertyValue(document, name, property, depth + 1)]),
  );
  return fc.record(model, { requiredKeys: required.filter((name) => name in model) });
}
