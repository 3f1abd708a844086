import { statement } from "../../db/index.js";

export interface ApiKeyRow {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  secret_hash: string;
  scopes: string;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

const columns = `id, project_id, name, prefix, secret_hash, scopes, created_by, created_at, expires_at, last_used_at,
  revoked_at`;

/** The row counting changes of keys: an instance that sees it move drops the keys it remembers. */
const generation = "api_keys:generation";

/** Wakes every instance's key cache (./service.ts): a key was revoked. */
export const apiKeysChannel = "api_keys";

export const apiKeyStatements = {
  insert: statement<
    ApiKeyRow,
    [
      id: string,
      projectId: string,
      name: string,
      prefix: string,
      secretHash: string,
      scopes: string,
      createdBy: string | null,
      now: Date,
      expiresAt: Date | null,
    ]
  >(
    "api_keys_insert",
    `INSERT INTO api_keys (id, project_id, name, prefix, secret_hash, scopes, created_by, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${columns}`,
  ),
  get: statement<ApiKeyRow, [projectId: string, id: string]>(
    "api_keys_get",
    `SELECT ${columns} FROM api_keys WHERE project_id = $1 AND id = $2`,
  ),
  /** A page of a project's keys, oldest first (api_keys_project_id_created_at_id_idx). */
  page: statement<ApiKeyRow, [projectId: string, limit: number]>(
    "api_keys_page",
    `SELECT ${columns} FROM api_keys WHERE project_id = $1 ORDER BY created_at, id LIMIT $2`,
  ),
  pageAfter: statement<ApiKeyRow, [projectId: string, limit: number, createdAt: Date, id: string]>(
    "api_keys_page_after",
    `SELECT ${columns} FROM api_keys WHERE project_id = $1 AND (created_at > $3 OR (created_at = $3 AND id > $4))
     ORDER BY created_at, id LIMIT $2`,
  ),
  /** A presented key's record, found by its prefix (api_keys_prefix_key). */
  byPrefix: statement<ApiKeyRow, [prefix: string]>(
    "api_keys_by_prefix",
    `SELECT ${columns} FROM api_keys WHERE prefix = $1`,
  ),
  revoke: statement<ApiKeyRow, [projectId: string, id: string, now: Date]>(
    "api_keys_revoke",
    `UPDATE api_keys SET revoked_at = $3 WHERE project_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING ${columns}`,
  ),
  /** last_used_at, unless another instance wrote it within the minute. */
  touch: statement<unknown, [id: string, now: Date, minuteAgo: Date]>(
    "api_keys_touch",
    "UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)",
  ),
  bumpGeneration: statement<unknown>(
    "api_keys_bump_generation",
    `INSERT INTO outbox_cursors (name, position) VALUES ('${generation}', 1)
     ON CONFLICT (name) DO UPDATE SET position = outbox_cursors.position + 1`,
  ),
  generation: statement<{ position: bigint }>(
    "api_keys_generation",
    `SELECT position FROM outbox_cursors WHERE name = '${generation}'`,
  ),
};
