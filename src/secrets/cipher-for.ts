import type { Config } from "../config.js";
import { createSecretsCipher, type SecretsCipher } from "../modules/webhooks/secrets.js";
import { secretsKeyMaterial } from "./key-material.js";

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
