import { createHash, timingSafeEqual } from "node:crypto";

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Constant-time check of a presented key against every configured key. Both
 * sides are hashed first so the comparison never depends on a key's length,
 * and every configured key is compared, whichever matches.
 */
export function isValidApiKey(presented: string, configured: readonly string[]): boolean {
  const candidate = digest(presented);
  let valid = false;
  for (const key of configured) valid = timingSafeEqual(candidate, digest(key)) || valid;
  return valid;
}
