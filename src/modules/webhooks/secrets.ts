import { randomBytes } from "node:crypto";

/**
 * Webhook signing secrets: `whsec_` + base64 of random bytes (Standard Webhooks). They are
 * stored sealed (src/secrets/cipher.ts), so that a copy of the database alone does not hand them out.
 */

export const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;

/** A new signing secret: shown to its owner once, then stored only encrypted. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The HMAC key a secret stands for; throws when it is not `whsec_` + canonical base64 of 24–64 bytes. */
export function secretKeyBytes(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : undefined;
  if (encoded === undefined || !base64.test(encoded)) throw new Error("A webhook secret is whsec_ + base64");
  const key = Buffer.from(encoded, "base64");
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
    throw new Error(`A webhook secret holds ${MIN_SECRET_BYTES}–${MAX_SECRET_BYTES} bytes`);
  }
  return key;
}
