import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { generateSecret, secretKeyBytes } from "../src/modules/webhooks/secrets.js";
import { createSecretsCipher, SecretDecryptionError } from "../src/secrets/cipher.js";
import { keyFilePath, readOrCreateKeyFile, secretsKeyMaterial } from "../src/secrets/key-material.js";

const scratch = mkdtempSync(join(tmpdir(), "webhook-secrets-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const webhookId = "6f1d2c4e-8a3b-4c5d-9e6f-7a8b9c0d1e2f";

describe("webhook secrets", () => {
  it("are whsec_ + base64 of 32 random bytes, usable by the standardwebhooks package", () => {
    const secrets = Array.from({ length: 50 }, generateSecret);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(secretKeyBytes(secret)).toHaveLength(32);
      expect(() => new Webhook(secret)).not.toThrow();
    }
    expect(new Set(secrets).size).toBe(50);
  });

  it("are refused when not whsec_ + canonical base64 of 24–64 bytes", () => {
    const encoded = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");
    expect(secretKeyBytes(`whsec_${encoded(24)}`)).toHaveLength(24);
    expect(secretKeyBytes(`whsec_${encoded(64)}`)).toHaveLength(64);
    expect(() => secretKeyBytes(`whsec_${encoded(23)}`)).toThrow(/24–64 bytes/);
    expect(() => secretKeyBytes(`whsec_${encoded(65)}`)).toThrow(/24–64 bytes/);
    expect(() => secretKeyBytes(encoded(32))).toThrow(/whsec_/);
    expect(() => secretKeyBytes(`whsec_${encoded(32).slice(0, -1)}`)).toThrow(/base64/);
    expect(() => secretKeyBytes(`whsec_${encoded(32).replace("B", "-")}`)).toThrow(/base64/);
  });
});

describe("encryption at rest", () => {
  const cipher = createSecretsCipher("k".repeat(32));

  it("round-trips, with a fresh nonce each time and nothing of the secret in the stored text", () => {
    const secret = generateSecret();
    const first = cipher.encrypt(secret, webhookId);
    const second = cipher.encrypt(secret, webhookId);
    expect(first).not.toBe(second);
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(first).not.toContain(secret.slice("whsec_".length, 16));
    expect(cipher.decrypt(first, webhookId)).toBe(secret);
    expect(cipher.decrypt(second, webhookId)).toBe(secret);
    // The same key material in another process (a restart, another instance) decrypts it.
    expect(createSecretsCipher("k".repeat(32)).decrypt(first, webhookId)).toBe(secret);
  });

  it("refuses a tampered ciphertext, nonce or tag", () => {
    const stored = cipher.encrypt(generateSecret(), webhookId);
    const [version, keyId, nonce, sealed] = stored.split(".") as [string, string, string, string];
    const flip = (text: string, index: number) => {
      const bytes = Buffer.from(text, "base64url");
      bytes[index] = (bytes[index] as number) ^ 1;
      return bytes.toString("base64url");
    };
    const tampered = [
      [version, keyId, nonce, flip(sealed, 0)].join("."), // ciphertext
      [version, keyId, nonce, flip(sealed, Buffer.from(sealed, "base64url").length - 1)].join("."), // tag
      [version, keyId, flip(nonce, 0), sealed].join("."), // nonce
    ];
    for (const text of tampered) {
      expect(() => cipher.decrypt(text, webhookId)).toThrow(SecretDecryptionError);
      expect(() => cipher.decrypt(text, webhookId)).toThrow(/fails authentication/);
    }
  });

  it("refuses a secret copied onto another webhook", () => {
    const stored = cipher.encrypt(generateSecret(), webhookId);
    expect(() => cipher.decrypt(stored, "11111111-2222-4333-8444-555555555555")).toThrow(/fails authentication/);
  });

  it("says so when the secret was encrypted under another key, and when the text is not one", () => {
    const stored = createSecretsCipher("other key material, 32 bytes long").encrypt(generateSecret(), webhookId);
    expect(() => cipher.decrypt(stored, webhookId)).toThrow(/encrypted with another key/);
    const [, keyId, nonce, sealed] = cipher.encrypt(generateSecret(), webhookId).split(".");
    const malformed = [
      "",
      "whsec_abc",
      `v1.${keyId}.${nonce}`,
      `v2.${keyId}.${nonce}.${sealed}`,
      `v1.${keyId}.${nonce}.${sealed}.x`,
      `v1.${keyId}.AAAA.${sealed}`,
      `v1.${keyId}.${nonce}.AAAA`,
    ];
    for (const text of malformed) {
      expect(() => cipher.decrypt(text, webhookId)).toThrow(/not in a known format/);
    }
  });
});

describe("the key webhook secrets are encrypted under", () => {
  const settings = (overrides: { nodeEnv?: string; databaseUrl?: string; secretsKey?: string }) => ({
    nodeEnv: overrides.nodeEnv ?? "development",
    databaseUrl: overrides.databaseUrl ?? `file:${join(scratch, "db", "agents.db")}`,
    webhooks: { secretsKey: overrides.secretsKey },
  });

  it("is WEBHOOK_SECRETS_KEY, else JWT_SECRET, from configuration", () => {
    const key = "s".repeat(40);
    expect(loadConfig({ WEBHOOK_SECRETS_KEY: key, JWT_SECRET: "j".repeat(32) }).webhooks.secretsKey).toBe(key);
    expect(loadConfig({ JWT_SECRET: "j".repeat(32) }).webhooks.secretsKey).toBe("j".repeat(32));
    expect(loadConfig({}).webhooks.secretsKey).toBeUndefined();
    expect(secretsKeyMaterial(settings({ secretsKey: key }))).toBe(key);
  });

  it("is required (32+ bytes) in production, in one line naming the variable", () => {
    const production = { NODE_ENV: "production", JWT_SECRET: "j".repeat(32) };
    expect(() => loadConfig(production)).toThrow(
      new ConfigError("Invalid configuration: WEBHOOK_SECRETS_KEY is required when NODE_ENV=production"),
    );
    expect(() => loadConfig({ WEBHOOK_SECRETS_KEY: "s".repeat(31) })).toThrow(
      new ConfigError("Invalid configuration: WEBHOOK_SECRETS_KEY must be at least 32 bytes"),
    );
    expect(loadConfig({ ...production, WEBHOOK_SECRETS_KEY: "s".repeat(32) }).webhooks.secretsKey).toBe("s".repeat(32));
    expect(() => secretsKeyMaterial(settings({ nodeEnv: "production" }))).toThrow(/WEBHOOK_SECRETS_KEY is required/);
  });

  it("is otherwise a key file next to the SQLite file (./data for PostgreSQL), mode 0600, kept across restarts", () => {
    expect(keyFilePath("file:./data/agents.db?mode=rwc")).toBe(resolve("data/webhook-secrets.key"));
    expect(keyFilePath("postgresql://postgres@127.0.0.1:5432/test")).toBe(resolve("data/webhook-secrets.key"));
    const path = join(scratch, "db", "webhook-secrets.key");
    expect(keyFilePath(`file:${join(scratch, "db", "agents.db")}`)).toBe(path);

    const first = secretsKeyMaterial(settings({}));
    expect(first).toBeInstanceOf(Buffer);
    expect(first).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(secretsKeyMaterial(settings({}))).toEqual(first);
  });

  it("is one key when several processes create the file at once", { timeout: 60_000 }, async () => {
    const path = join(scratch, "race", "webhook-secrets.key");
    const script = `import { readOrCreateKeyFile } from ${JSON.stringify(resolve("src/secrets/key-material.ts"))};
      process.stdout.write(readOrCreateKeyFile(${JSON.stringify(path)}).toString("base64"));`;
    const keys = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<string>((done, fail) => {
            const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script]);
            let out = "";
            child.stdout.on("data", (chunk) => {
              out += chunk;
            });
            child.on("error", fail);
            child.on("exit", (code) => (code === 0 ? done(out) : fail(new Error(`exit ${code}`))));
          }),
      ),
    );
    expect(new Set(keys).size).toBe(1);
    expect(Buffer.from(keys[0] as string, "base64")).toHaveLength(32);
    expect(readOrCreateKeyFile(path).toString("base64")).toBe(keys[0]);
  });

  it("refuses a key file too short to be a key", () => {
    const path = join(scratch, "short.key");
    writeFileSync(path, Buffer.alloc(16).toString("base64"));
    expect(() => readOrCreateKeyFile(path)).toThrow(/must hold at least 32 bytes/);
    expect(readFileSync(path, "utf8")).toBe(Buffer.alloc(16).toString("base64"));
  });
});
