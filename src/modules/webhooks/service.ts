import { randomUUID } from "node:crypto";
import type { Config } from "../../config.js";
import type { Database, Tx } from "../../db/index.js";
import { AppError, notFound, validationError } from "../../errors.js";
import { isUuid } from "../../resources/schemas.js";
import { cipherFor } from "../../secrets/cipher-for.js";
import { agentNotFound } from "../agents/service.js";
import { agentStatements } from "../agents/sql.js";
import { eventLogHead } from "../events/sql.js";
import { deliveriesChannel, deliveryStatements } from "./delivery-sql.js";
import type { WebhookCreateInput, WebhookOut, WebhookUpdateBody } from "./schemas.js";
import { generateSecret } from "./secrets.js";
import { feedChannel, webhookStatements as statements, toWebhook } from "./sql.js";
import { checkUrl, UnsafeUrlError } from "./ssrf.js";

export const webhookNotFound = () => notFound("Webhook");

/** How long a replaced secret keeps signing (SPEC §12.3), so receivers can switch without losing a message. */
export const secretOverlapMs = 24 * 3_600_000;

/** The SSRF guard at the door: a URL that could never be called is refused now, as a 400 on `url`. */
async function checkedUrl(url: string, config: Config): Promise<void> {
  try {
    await checkUrl(url, { allowPrivate: config.webhooks.allowPrivate, signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    if (error instanceof UnsafeUrlError) {
      throw validationError([{ field: "url", message: error.message.replace(/^url /, "") }]);
    }
    if (error instanceof DOMException && error.name === "TimeoutError") {
      throw validationError([{ field: "url", message: "has a host that could not be resolved in time" }]);
    }
    throw error;
  }
}

async function checkAgent(db: Database, agentId: string | null | undefined): Promise<void> {
  if (agentId && !(await db.get(agentStatements.exists, [agentId]))) throw agentNotFound();
}

/** Makes the new or re-enabled webhook part of the feed from the log's head on (see joinFeed). */
async function joinFeed(tx: Tx): Promise<void> {
  await tx.run(statements.joinFeed, [await eventLogHead(tx)]);
  await tx.notify(feedChannel);
}

export const webhooksService = {
  async list(db: Database, { skip, limit }: { skip: number; limit: number }): Promise<WebhookOut[]> {
    return (await db.all(statements.page, [limit, skip])).map(toWebhook);
  },

  async get(db: Database, id: string): Promise<WebhookOut> {
    const row = isUuid(id) ? await db.get(statements.get, [id]) : undefined;
    if (!row) throw webhookNotFound();
    return toWebhook(row);
  },

  /** The webhook and its first secret, which only this answer shows; stored encrypted. */
  async create(db: Database, config: Config, input: WebhookCreateInput): Promise<WebhookOut & { secret: string }> {
    await checkedUrl(input.url, config);
    await checkAgent(db, input.agent_id);
    const id = randomUUID();
    const secret = generateSecret();
    const sealed = cipherFor(config).encrypt(secret, id);
    const now = new Date();
    const row = await db.transaction(async (tx) => {
      await joinFeed(tx);
      const types = JSON.stringify([...new Set(input.types)]);
      const inserted = await tx.get(statements.insert, [
        id,
        input.url,
        types,
        input.agent_id ?? null,
        input.description ?? null,
        now,
      ]);
      await tx.run(statements.insertSecret, [randomUUID(), id, sealed, now]);
      return inserted;
    });
    if (!row) throw new Error("The insert returned no row");
    return { ...toWebhook(row), secret };
  },

  /**
   * Disabling pauses the pending deliveries; enabling resumes them, clears
   * `disabled_reason` and the run of failures, and joins the feed again
   * (events while it was disabled are not delivered).
   */
  async update(db: Database, config: Config, id: string, patch: WebhookUpdateBody): Promise<WebhookOut> {
    if (!isUuid(id)) throw webhookNotFound();
    if (patch.url !== undefined) await checkedUrl(patch.url, config);
    await checkAgent(db, patch.agent_id);
    const now = new Date();
    const row = await db.transaction(async (tx) => {
      const before = await tx.get(statements.lock, [id]);
      if (!before) throw webhookNotFound();
      const enabled = patch.enabled ?? before.enabled;
      const enabling = enabled && !before.enabled;
      const written = await tx.get(statements.update, [
        id,
        patch.url ?? before.url,
        patch.types ? JSON.stringify([...new Set(patch.types)]) : before.types,
        patch.agent_id === undefined ? before.agent_id : patch.agent_id,
        patch.description === undefined ? before.description : patch.description,
        enabled,
        enabled ? null : before.disabled_reason,
        now,
        enabling,
      ]);
      if (enabling) {
        await joinFeed(tx);
        await tx.run(deliveryStatements.resume, [id, now]);
        await tx.notify(deliveriesChannel);
      } else if (!enabled && before.enabled) {
        await tx.run(deliveryStatements.pause, [id]);
      }
      return written;
    });
    if (!row) throw webhookNotFound();
    return toWebhook(row);
  },

  /** Deletes the webhook with its secrets and deliveries; an attempt in flight is not recorded. */
  async remove(db: Database, id: string): Promise<void> {
    const row = isUuid(id) ? await db.get(statements.delete, [id]) : undefined;
    if (!row) throw webhookNotFound();
  },

  /** A new secret; the ones in use keep signing for the overlap, older ones are dropped. */
  async rotateSecret(db: Database, config: Config, id: string): Promise<{ secret: string }> {
    if (!isUuid(id)) throw webhookNotFound();
    const secret = generateSecret();
    const sealed = cipherFor(config).encrypt(secret, id);
    const now = new Date();
    await db.transaction(async (tx) => {
      if (!(await tx.get(statements.lock, [id]))) throw webhookNotFound();
      await tx.run(statements.dropExpiredSecrets, [id, now]);
      await tx.run(statements.retireSecrets, [id, new Date(now.getTime() + secretOverlapMs)]);
      await tx.run(statements.insertSecret, [randomUUID(), id, sealed, now]);
    });
    return { secret };
  },
};

export const webhookDisabledConflict = () =>
  new AppError("conflict", "The webhook is disabled; enable it (PATCH enabled: true) to send deliveries");
