import { z } from "zod";

/** docs/http.md: the limits of a resource's metadata. */
export const metadataLimits = { keys: 50, keyLength: 40, valueLength: 500 } as const;
const keyPattern = /^[A-Za-z0-9_.-]{1,40}$/;

export type Metadata = Record<string, string>;
export type MetadataPatch = Record<string, string | null>;

const codePoints = (value: string) => {
  let count = 0;
  for (const _ of value) count++;
  return count;
};

function keyProblem(key: string): string | undefined {
  if (!keyPattern.test(key)) return `keys must be 1–${metadataLimits.keyLength} characters of A–Z a–z 0–9 _ . -`;
  // A key the JavaScript side could not hold as plain data (zod would drop it silently).
  if (key === "__proto__") return "must not be __proto__";
  return undefined;
}

function valueProblem(value: unknown, nullable: boolean): string | undefined {
  if (value === null && nullable) return undefined;
  if (typeof value !== "string") return nullable ? "must be a string or null" : "must be a string";
  if (!value.isWellFormed()) return "must be well-formed Unicode (no lone surrogates)";
  if (value.includes("\u0000")) return "must not contain U+0000";
  if (codePoints(value) > metadataLimits.valueLength)
    return `must have at most ${metadataLimits.valueLength} characters`;
  return undefined;
}

/**
 * Checked on the value as sent, never on a copy: zod's records drop a
 * `__proto__` key without a word, and the stored text keeps the client's key order.
 */
function metadataSchema<T extends MetadataPatch>(nullable: boolean, maxKeys: number | undefined) {
  return (z.unknown() as z.ZodType<T>).check((ctx) => {
    const value: unknown = ctx.value;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      ctx.issues.push({ code: "custom", input: value, message: "must be an object of string values" });
      return;
    }
    const keys = Object.keys(value);
    if (maxKeys !== undefined && keys.length > maxKeys) {
      ctx.issues.push({ code: "custom", input: value, message: `must have at most ${maxKeys} keys` });
      return;
    }
    for (const key of keys) {
      const problem = keyProblem(key) ?? valueProblem((value as Record<string, unknown>)[key], nullable);
      if (problem) ctx.issues.push({ code: "custom", input: value, path: [key], message: problem });
    }
  });
}

const documented = (nullable: boolean) => ({
  type: "object" as const,
  maxProperties: metadataLimits.keys,
  propertyNames: { pattern: keyPattern.source, maxLength: metadataLimits.keyLength },
  additionalProperties: nullable
    ? { type: ["string", "null"], maxLength: metadataLimits.valueLength }
    : { type: "string", maxLength: metadataLimits.valueLength },
});

/** Metadata of a create or a replacement: it becomes the whole metadata. */
export const metadataInput = metadataSchema<Metadata>(false, metadataLimits.keys).meta({
  ...documented(false),
  description: `At most ${metadataLimits.keys} keys (1–${metadataLimits.keyLength} characters of A–Z a–z 0–9 _ . -), string values of at most ${metadataLimits.valueLength} characters`,
  example: { team: "research" },
});

/**
 * Metadata of a PATCH, merged into the stored one: a key set to null is
 * removed. The merged result is held to the limits by the service.
 */
export const metadataPatch = metadataSchema<MetadataPatch>(true, undefined).meta({
  ...documented(true),
  maxProperties: undefined,
  description: "Merged into the stored metadata; a key set to null is removed",
  example: { team: "research", stale: null },
});

const metadataPairs = metadataSchema<Metadata>(false, metadataLimits.keys).meta({
  ...documented(false),
  description: "Only items whose metadata holds every given pair: metadata[team]=research",
});

/** Query parameters written `name[key]=value` (OpenAPI's deepObject): the REST layer gathers them into an object. */
export const keyedParameters = new WeakSet<z.core.$ZodType>([metadataPairs]);

/**
 * `metadata[<key>]=<value>` query parameters: every pair must match. A pipe,
 * because trpc-to-openapi documents no other object as a query parameter.
 */
export const metadataFilter = metadataPairs.pipe(z.custom<Metadata>());

/** The stored metadata after `patch`: null removes a key, a string sets it (the service checks the limits). */
export function mergeMetadata(stored: Metadata, patch: MetadataPatch): Metadata {
  const merged: Metadata = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
