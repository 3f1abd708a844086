import { hash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { Database, Queryable } from "../../db/index.js";
import { AppError, notFound, validationError } from "../../errors.js";
import type { KeptAnswer } from "../../idempotency/kept-answer.js";
import type { Acting } from "../../resources/acting.js";
import { isUuid } from "../../resources/schemas.js";
import type { Scope } from "../../trpc/meta.js";
import { auditService } from "../audit/service.js";
import type { ApiKeyCreateInput, ApiKeyOut } from "./schemas.js";
import { type ApiKeyRow, apiKeysChannel, apiKeyStatements as statements } from "./sql.js";

const keyNotFound = () => notFound("API key");

/**
 * A key is `amk_` + 12 hex digits (its prefix, shown in lists, and how it is
 * found) + `_` + 32 random bytes in base64url (its secret, of which only a
 * SHA-256 is stored).
 */
const keyPattern = /^(amk_[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

// One call, no hash object: this runs on every request that presents a key.
const hashOf = (secret: string) => hash("sha256", secret, "buffer");

/** A hash no secret has, compared against when no key has the presented prefix: every refusal costs the same. */
const noSecretHash = hashOf(randomBytes(32).toString("base64url"));

const toApiKey = (row: ApiKeyRow): ApiKeyOut => ({
  id: row.id,
  name: row.name,
  scopes: JSON.parse(row.scopes),
  prefix: row.prefix,
  created_at: row.created_at,
  expires_at: row.expires_at,
  last_used_at: row.last_used_at,
  created_by: row.created_by,
  revoked_at: row.revoked_at,
});

/** A presented key that is valid now: whose it is and what it may do. */
export interface KeyHolder {
  id: string;
  projectId: string;
  scopes: ReadonlySet<Scope>;
  /** For the audit log: the key's name and prefix, never its secret. */
  label: string;
}

/** last_used_at is written at most this often per key and instance. */
const TOUCH_EVERY_MS = 60_000;
/** Keys remembered per instance at most, known and unknown; past it the memory starts again. */
const MOST_REMEMBERED = 10_000;

/** A key as remembered: its row, its stored hash decoded, and whose it is (made once, not per request). */
interface KnownKey {
  row: ApiKeyRow;
  hash: Buffer;
  expiresAt: number | null;
  holder: KeyHolder;
}

const knownKey = (row: ApiKeyRow): KnownKey => {
  const stored = Buffer.from(row.secret_hash, "base64url");
  return {
    row,
    hash: stored.length === 32 ? stored : noSecretHash,
    expiresAt: row.expires_at === null ? null : Date.parse(row.expires_at),
    holder: {
      id: row.id,
      projectId: row.project_id,
      scopes: new Set(JSON.parse(row.scopes) as Scope[]),
      label: `${row.name} (${row.prefix})`,
    },
  };
};

/**
 * The keys an instance has looked up, by prefix (null: no such key), so a
 * request with a key reads no row. Revoking a key anywhere bumps a
 * generation and notifies channel `api_keys`; a notification (or, on SQLite,
 * another process's commit) makes the next lookup read the generation, and a
 * changed generation forgets every key. A revocation takes effect on every
 * instance as soon as the notification arrives (PostgreSQL: at once; SQLite:
 * within the 50 ms the file is watched).
 */
class KeyMemory {
  private readonly keys = new Map<string, KnownKey | null>();
  private readonly touched = new Map<string, number>();
  private generation: bigint | undefined;
  private stale = true;

  constructor(private readonly db: Database) {
    db.listen(apiKeysChannel, (payload) => {
      // This process's own revocation names the key: forget everything at once.
      if (payload !== "") this.forget();
      this.stale = true;
    });
  }

  /** After this process committed a revocation: its next request with any key reads it again, without waiting for the notification. */
  changed() {
    this.forget();
    this.stale = true;
  }

  private forget() {
    this.keys.clear();
    validLately.clear();
    this.generation = undefined;
  }

  async find(prefix: string): Promise<KnownKey | undefined> {
    if (this.stale) {
      this.stale = false;
      const now = (await this.db.get(statements.generation, []))?.position ?? 0n;
      if (now !== this.generation) {
        this.forget();
        this.generation = now;
      }
    }
    if (this.keys.has(prefix)) return this.keys.get(prefix) ?? undefined;
    const row = await this.db.get(statements.byPrefix, [prefix]);
    const known = row ? knownKey(row) : undefined;
    if (this.keys.size >= MOST_REMEMBERED) this.keys.clear();
    this.keys.set(prefix, known ?? null);
    return known;
  }

  /** Writes last_used_at, at most once a minute per key. */
  touch(id: string) {
    const now = Date.now();
    if ((this.touched.get(id) ?? 0) > now - TOUCH_EVERY_MS) return;
    if (this.touched.size >= MOST_REMEMBERED) this.touched.clear();
    this.touched.set(id, now);
    // Kept to within a minute: a write that fails is tried again a minute later.
    void this.db.run(statements.touch, [id, new Date(now), new Date(now - TOUCH_EVERY_MS)]).catch(() => {
      this.touched.delete(id);
    });
  }
}

/**
 * Presented keys this process found valid lately (by their prefix and a
 * digest of their secret), and whose they are: whom a request counts against (its rate-limit
 * bucket) is known before the request is authorised, with no read. A key
 * never found valid, such as an invented one, is not here, and counts against
 * its sender's address. Emptied with the memory of keys, at every revocation.
 */
const validLately = new Map<string, string>();
const lateKey = (prefix: string, secretHash: Buffer) => prefix + secretHash.toString("latin1");

/** The id of the key `presented` is, if this process found it valid lately. */
export function keyHolderOf(presented: string): string | undefined {
  if (validLately.size === 0) return undefined;
  const parts = keyPattern.exec(presented);
  return parts ? validLately.get(lateKey(parts[1] ?? "", hashOf(parts[2] ?? ""))) : undefined;
}

const memories = new WeakMap<Database, KeyMemory>();
const memoryOf = (db: Database) => {
  let memory = memories.get(db);
  if (!memory) {
    memory = new KeyMemory(db);
    memories.set(db, memory);
  }
  return memory;
};

export const apiKeysService = {
  /**
   * The key `presented` stands for, if it is valid now: known, its secret's
   * hash equal (compared in constant time, over fixed-length digests), not
   * revoked, not expired. Reads no row once the key is remembered.
   */
  async authenticate(db: Database, presented: string): Promise<KeyHolder | undefined> {
    const parts = keyPattern.exec(presented);
    if (!parts) return undefined;
    const [, prefix = "", secret = ""] = parts;
    const known = await memoryOf(db).find(prefix);
    const secretHash = hashOf(secret);
    const matches = timingSafeEqual(secretHash, known?.hash ?? noSecretHash);
    if (!known || !matches || known.row.revoked_at !== null) return undefined;
    if (known.expiresAt !== null && known.expiresAt <= Date.now()) return undefined;
    memoryOf(db).touch(known.row.id);
    if (validLately.size >= MOST_REMEMBERED) validLately.clear();
    validLately.set(lateKey(prefix, secretHash), known.row.id);
    return known.holder;
  },

  /**
   * A new key of the acting project with `input.scopes`, all of which
   * `granting` (the creator's scopes) must hold. The key is shown once, in
   * the answer; only its prefix and a hash of its secret are stored.
   */
  async create(
    db: Database,
    acting: Acting,
    granting: ReadonlySet<Scope>,
    input: Omit<ApiKeyCreateInput, "project_id">,
    answer?: KeptAnswer,
  ): Promise<ApiKeyOut & { key: string }> {
    const beyond = input.scopes.filter((scope) => !granting.has(scope));
    if (beyond.length > 0) {
      throw new AppError("forbidden", "A key may be granted only scopes its creator holds", {
        required_scope: beyond[0],
        scopes: beyond,
      });
    }
    const expiresAt = input.expires_at === undefined ? null : new Date(input.expires_at);
    if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
      throw validationError([{ field: "expires_at", message: "must be in the future" }]);
    }
    const prefix = `amk_${randomBytes(6).toString("hex")}`;
    const secret = randomBytes(32).toString("base64url");
    const scopes = [...new Set(input.scopes)];
    const createdBy = acting.actor.type === "user" ? acting.actor.id : null;
    return db.transaction(async (tx) => {
      const row = await tx.get(statements.insert, [
        randomUUID(),
        acting.projectId,
        input.name,
        prefix,
        hashOf(secret).toString("base64url"),
        JSON.stringify(scopes),
        createdBy,
        new Date(),
        expiresAt,
      ]);
      if (!row) throw new Error("The insert returned no row");
      await auditService.record(
        tx,
        acting,
        "api_key.created",
        { type: "api_key", id: row.id },
        {
          name: row.name,
          prefix,
          scopes,
          expires_at: row.expires_at,
        },
      );
      const created = { ...toApiKey(row), key: `${prefix}_${secret}` };
      await answer?.keep(tx, created);
      return created;
    });
  },

  async list(db: Queryable, projectId: string, query: { after?: string; limit: number }): Promise<ApiKeyOut[]> {
    if (query.after === undefined) return (await db.all(statements.page, [projectId, query.limit])).map(toApiKey);
    const from = isUuid(query.after) ? await db.get(statements.get, [projectId, query.after]) : undefined;
    if (!from) throw validationError([{ field: "after", message: "is not a key of this project" }]);
    const rows = await db.all(statements.pageAfter, [projectId, query.limit, new Date(from.created_at), from.id]);
    return rows.map(toApiKey);
  },

  async get(db: Queryable, projectId: string, id: string): Promise<ApiKeyOut> {
    const row = isUuid(id) ? await db.get(statements.get, [projectId, id]) : undefined;
    if (!row) throw keyNotFound();
    return toApiKey(row);
  },

  /** This process forgets the keys it remembers: after a committed change that ends keys (a project's deletion). */
  forgetKeys(db: Database) {
    memoryOf(db).changed();
  },

  /** Revokes the key on every instance (docs/api/projects.md: within a second); revoking it again changes nothing. */
  async revoke(db: Database, acting: Acting, id: string): Promise<void> {
    const revoked = await db.transaction(async (tx) => {
      const row = isUuid(id) ? await tx.get(statements.revoke, [acting.projectId, id, new Date()]) : undefined;
      if (!row) {
        if (isUuid(id) && (await tx.get(statements.get, [acting.projectId, id]))) return false;
        throw keyNotFound();
      }
      await tx.run(statements.bumpGeneration, []);
      await tx.notify(apiKeysChannel, row.id);
      await auditService.record(
        tx,
        acting,
        "api_key.revoked",
        { type: "api_key", id: row.id },
        {
          name: row.name,
          prefix: row.prefix,
        },
      );
      return true;
    });
    // Committed: this process refuses the key from its next request on, whenever the notification comes.
    if (revoked) memoryOf(db).changed();
  },
};
