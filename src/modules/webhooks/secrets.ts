import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Webhook signing secrets: `whsec_` + base64 of random bytes (Standard Webhooks), and their
 * encryption at rest, so that a copy of the database alone does not hand them out.
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

/** Why a stored secret could not be decrypted; the message never contains the secret. */
export class SecretDecryptionError extends Error {
  constructor(readonly reason: "malformed" | "other_key" | "tampered") {
    super(
      reason === "other_key"
        ? "The webhook secret was encrypted with another key (was WEBHOOK_SECRETS_KEY changed?)"
        : reason === "tampered"
          ? "The stored webhook secret fails authentication (altered, or bound to another webhook)"
          : "The stored webhook secret is not in a known format",
    );
    this.name = "SecretDecryptionError";
  }
}

export interface SecretsCipher {
  /** `webhookId` is bound to the ciphertext: a secret copied onto another webhook does not decrypt. */
  encrypt(secret: string, webhookId: string): string;
  decrypt(stored: string, webhookId: string): string;
}

const VERSION = "v1";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const SALT = "agent-management-api webhook secrets";

/**
 * AES-256-GCM under a key derived with HKDF-SHA256 from the configured key material, a random
 * 96-bit nonce per secret. Stored as `v1.<key id>.<nonce>.<ciphertext + tag>` (base64url), where the
 * key id (also derived, not the key) tells "another key" from "tampered" when decryption fails.
 */
export function createSecretsCipher(keyMaterial: string | Buffer): SecretsCipher {
  const derive = (info: string, length: number) => Buffer.from(hkdfSync("sha256", keyMaterial, SALT, info, length));
  const key = derive("aes-256-gcm key", 32);
  const keyId = derive("key id", 6).toString("base64url");
  const aad = (webhookId: string) => Buffer.from(`${VERSION}.${keyId}.${webhookId}`);

  return {
    encrypt(secret, webhookId) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(aad(webhookId));
      const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return [VERSION, keyId, nonce.toString("base64url"), sealed.toString("base64url")].join(".");
    },
    decrypt(stored, webhookId) {
      const [version, storedKeyId, nonceText, sealedText, ...rest] = stored.split(".");
      if (version !== VERSION || rest.length > 0 || !nonceText || !sealedText) {
        throw new SecretDecryptionError("malformed");
      }
      if (storedKeyId !== keyId) throw new SecretDecryptionError("other_key");
      const nonce = Buffer.from(nonceText, "base64url");
      const sealed = Buffer.from(sealedText, "base64url");
      if (nonce.length !== NONCE_BYTES || sealed.length <= TAG_BYTES) throw new SecretDecryptionError("malformed");
      const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(webhookId));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      try {
        return Buffer.concat([
          decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)),
          decipher.final(),
        ]).toString("utf8");
      } catch {
        throw new SecretDecryptionError("tampered");
      }
    },
  };
}
