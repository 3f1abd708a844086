import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { Config } from "../config.js";
import { secretsKeyMaterial } from "./key-material.js";

/*
 * Values sealed at rest (webhook signing secrets, the kept answers of
 * Idempotency-Keys that hold one): AES-256-GCM under a key derived from
 * WEBHOOK_SECRETS_KEY, so a copy of the database alone reveals none of them.
 */

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

const ciphers = new WeakMap<Config, SecretsCipher>();

/** The cipher of this configuration's key, derived once (HKDF, perhaps a key file read) and then kept. */
export function cipherFor(config: Config): SecretsCipher {
  let cipher = ciphers.get(config);
  if (!cipher) {
    cipher = createSecretsCipher(secretsKeyMaterial(config));
    ciphers.set(config, cipher);
  }
  return cipher;
}
