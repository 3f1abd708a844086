import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Config } from "../../config.js";
import { clientAddress } from "../../limits/client-address.js";
import { keyHolderOf } from "../api-keys/service.js";
import { isValidApiKey } from "./api-keys.js";
import { bearerPattern } from "./authorize.js";
import { verifyAccessToken } from "./tokens.js";

const headerText = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(",") : value);

/**
 * Whom a request counts against (its rate-limit bucket, its Idempotency-Keys):
 * the user of a valid bearer token, else a valid API key (a project's key by
 * its id, once this process has found it valid; a configured one by a digest:
 * keys are never stored), else the client address (TRUST_PROXY). Judged from the credentials alone, whatever the operation
 * requires, so the count is the same on every route; an invalid credential
 * counts against the address that sent it, so inventing tokens buys nothing.
 * No database is read: this runs before every limited request.
 */
export function requesterOf(req: IncomingMessage, config: Config): string {
  const authorization = headerText(req.headers.authorization);
  const token = authorization ? bearerPattern.exec(authorization)?.[1] : undefined;
  const userId = token ? verifyAccessToken(token, config) : undefined;
  if (userId) return `user:${userId}`;
  const apiKey = headerText(req.headers["x-api-key"])?.trim();
  // A project's key this process has found valid: its own bucket.
  const holder = apiKey?.startsWith("amk_") ? keyHolderOf(apiKey) : undefined;
  if (holder) return `key:${holder}`;
  if (apiKey && config.apiKeys.length > 0 && isValidApiKey(apiKey, config.apiKeys)) {
    return `key:${createHash("sha256").update(apiKey).digest("base64url")}`;
  }
  return `address:${clientAddress(req, config.trustProxy)}`;
}
