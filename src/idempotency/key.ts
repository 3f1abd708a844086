import { hash } from "node:crypto";
import { validationError } from "../errors.js";

const printableAscii = /^[\x20-\x7e]{1,255}$/;

/**
 * The `Idempotency-Key` of a request (docs/http.md): 1–255 printable ASCII
 * characters; undefined when absent. Anything else, or the header twice, is 400.
 */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header === "string" && printableAscii.test(header)) return header;
  throw validationError([{ field: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters" }]);
}

/** JSON with every object's keys sorted: the same body fingerprints the same whatever its key order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}

/**
 * What makes two requests with one key the same request: the operation (the
 * procedure, which REST's method and path name), its input (path parameters
 * and body) and who sent it.
 */
export const fingerprintOf = (operation: string, input: unknown, sender: string) =>
  hash("sha256", JSON.stringify([operation, canonical(input), sender]), "base64url");
