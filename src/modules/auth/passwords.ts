import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/**
 * Passwords are hashed with scrypt, node's built-in memory-hard function.
 * N=2^15, r=8, p=1 needs 32 MiB and ~0.1–0.2 s per hash on a 2-core machine:
 * the scrypt paper's interactive-login cost, doubled. The parameters are stored
 * in each hash, so raising them later keeps old hashes verifiable.
 */
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

// Format: scrypt$<N>$<r>$<p>$<salt base64url>$<key base64url>
const PREFIX = "scrypt";

function derive(password: string, salt: Buffer, cost: typeof COST, keyLength: number): Promise<Buffer> {
  // scrypt needs a little over 128·N·r bytes, just past node's default maxmem (32 MiB).
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, COST, KEY_LENGTH);
  return [PREFIX, COST.N, COST.r, COST.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** True when `password` matches `stored`; a malformed stored hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [prefix, n, r, p, salt, key] = stored.split("$");
  if (prefix !== PREFIX || !salt || !key) return false;
  const expected = Buffer.from(key, "base64url");
  const actual = await derive(
    password,
    Buffer.from(salt, "base64url"),
    { N: Number(n), r: Number(r), p: Number(p) },
    expected.length,
  );
  return timingSafeEqual(actual, expected);
}

// Same parameters and key length as a real hash, so checking against it costs the same.
const dummyHash = [PREFIX, COST.N, COST.r, COST.p, randomBytes(SALT_LENGTH), randomBytes(KEY_LENGTH)]
  .map((part) => (Buffer.isBuffer(part) ? part.toString("base64url") : part))
  .join("$");

/**
 * Spends the same work as checking a real password, for logins whose e-mail
 * matches no user: the response time must not tell which e-mails exist.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  await verifyPassword(password, dummyHash);
  return false;
}
