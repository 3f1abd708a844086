import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { makeFolder } from "../db/make-folder.js";

const KEY_FILE = "webhook-secrets.key";
const KEY_BYTES = 32;

export interface SecretsKeySettings {
  nodeEnv: string;
  databaseUrl: string;
  webhooks: { secretsKey: string | undefined };
}

/**
 * The key material webhook secrets are encrypted under: WEBHOOK_SECRETS_KEY (required in
 * production), else JWT_SECRET when set, else a key file. The file survives restarts but is not
 * in the database, so a dump of the database alone does not decrypt the secrets.
 */
export function secretsKeyMaterial(settings: SecretsKeySettings): string | Buffer {
  if (settings.webhooks.secretsKey) return settings.webhooks.secretsKey;
  if (settings.nodeEnv === "production") throw new Error("WEBHOOK_SECRETS_KEY is required when NODE_ENV=production");
  return readOrCreateKeyFile(keyFilePath(settings.databaseUrl));
}

/** Next to the SQLite file; for PostgreSQL or an in-memory database, in ./data. */
export function keyFilePath(databaseUrl: string): string {
  const sqliteFile = databaseUrl.startsWith("file:") ? databaseUrl.slice("file:".length).split("?")[0] : undefined;
  const directory = sqliteFile && sqliteFile !== ":memory:" ? dirname(resolve(sqliteFile)) : resolve("data");
  return join(directory, KEY_FILE);
}

/** Reads the key file, creating it (mode 0600) when missing; processes starting together agree on one key. */
export function readOrCreateKeyFile(path: string): Buffer {
  const existing = readKeyFile(path);
  if (existing) return existing;
  makeFolder(dirname(path));
  // Written whole under a private name, then linked into place: link() fails when another process
  // won the race, and nobody ever reads a half-written file.
  const draft = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(draft, `${randomBytes(KEY_BYTES).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  const key = readKeyFile(path);
  if (!key) throw new Error(`${path} vanished while it was being created`);
  return key;
}

function readKeyFile(path: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const key = Buffer.from(text.trim(), "base64");
  if (key.length < KEY_BYTES) throw new Error(`${path} must hold at least ${KEY_BYTES} bytes, base64-encoded`);
  return key;
}
