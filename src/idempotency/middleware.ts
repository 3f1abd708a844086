import type { OpenApiMeta } from "trpc-to-openapi";
import { AppError, type ErrorDetails, type ErrorKind } from "../errors.js";
import { appErrorOf } from "../http/errors.js";
import type { Context } from "../trpc/context.js";
import type { ProcedureMeta } from "../trpc/init.js";
import { cipherFor } from "../webhooks/cipher.js";
import { fingerprintOf, idempotencyKeyOf } from "./key.js";
import { markReplayed } from "./replayed.js";
import { senderOf } from "./sender.js";
import { type KeptRequest, idempotencyStore as store } from "./store.js";

type Meta = OpenApiMeta<ProcedureMeta>;

/**
 * How long a first request may run before its key can be taken again: far
 * beyond any request's time (a long poll waits 20 s at most), so only a
 * request whose process died leaves a key this long.
 */
const RUNNING_FOR_MS = 60_000;

interface MiddlewareOptions {
  ctx: Context;
  meta: Meta | undefined;
  path: string;
  type: string;
  getRawInput: () => Promise<unknown>;
  next: () => Promise<{ ok: true; data: unknown } | { ok: false; error: unknown }>;
}

/** The REST status of a success (as http/rest/resource.ts answers it), and its Location. */
function successOf(meta: Meta, data: unknown, input: unknown) {
  const { successStatus = 200, otherSuccess, location } = meta;
  const status = otherSuccess?.when(data, input) ? otherSuccess.status : successStatus;
  const headers: Record<string, string> =
    status === 201 && location ? { Location: location(data as Parameters<typeof location>[0]) } : {};
  return { status, headers };
}

type KeptError = { kind: ErrorKind; message: string; details?: ErrorDetails; headers?: Record<string, string> };

/**
 * A kept response body is sealed with the key that seals webhook secrets, and
 * bound to its sender and key: the answer to a webhook's creation holds the
 * secret, which a database dump alone must not hand out (SPEC §12.3). The
 * answers of a procedure whose meta says `keptInClear` hold nothing the
 * database does not hold in clear already (an agent, a task, a lease), and
 * are kept as they are: sealing cost a tenth of such a request's time.
 */
const sealed = (meta: Meta | undefined) => !meta?.keptInClear;

/** How a sealed body starts; JSON text never starts so. */
const sealedPrefix = "v1.";

const sealingName = (sender: string, key: string) => `idempotency ${sender} ${key}`;

const unreadable = () =>
  new AppError(
    "conflict",
    "The response kept for this Idempotency-Key can no longer be read (the service's key changed); use a new key",
  );

/** The kept response again: the result, or the error, the first request ended with. */
function replay(ctx: Context, meta: Meta | undefined, sender: string, key: string, kept: KeptRequest) {
  let text = kept.response_body ?? "";
  // A procedure kept in clear may still find a body sealed before it was (or by an older version).
  if (sealed(meta) || text.startsWith(sealedPrefix)) {
    try {
      text = cipherFor(ctx.config).decrypt(text, sealingName(sender, key));
    } catch {
      throw unreadable();
    }
  }
  const body = JSON.parse(text);
  if ((kept.response_status ?? 0) < 400) return { ok: true as const, data: body };
  const error = body as KeptError;
  throw new AppError(error.kind, error.message, error.details, error.headers);
}

const inFlight = () =>
  new AppError("conflict", "A request with this Idempotency-Key is still being processed; retry shortly", undefined, {
    "Retry-After": "1",
  });

const reused = () =>
  new AppError(
    "idempotency_key_reused",
    "This Idempotency-Key was used for a different request; use a new key for a new request",
  );

/** Whether the procedure creates something, so honours Idempotency-Key: a REST POST answered 201 (SPEC §13.1). */
export const creates = (meta: Meta | undefined) => meta?.openapi?.method === "POST" && meta.successStatus === 201;

/**
 * Idempotency keys (SPEC §13.1) for every creating mutation, REST and tRPC
 * alike: the first request with a key runs and its response is kept; the
 * same request again gets that response (`Idempotent-Replayed: true`); a
 * different one 422; one while the first still runs 409. Responses of 500 and
 * above are not kept, so a retry runs again.
 */
export async function idempotency({ ctx, meta, path, type, getRawInput, next }: MiddlewareOptions) {
  if (type !== "mutation" || !creates(meta) || !ctx.req) return next();
  const key = idempotencyKeyOf(ctx.req.headers["idempotency-key"]);
  if (key === undefined) return next();
  const input = await getRawInput();
  const sender = senderOf(ctx);
  const fingerprint = fingerprintOf(path, input, sender);
  // A key released by a failed first request between the claim and the read is simply claimed again.
  let claimed = false;
  for (let attempt = 0; attempt < 3 && !claimed; attempt++) {
    claimed = await store.claim(ctx.db, sender, key, fingerprint, RUNNING_FOR_MS);
    if (claimed) break;
    const kept = await store.find(ctx.db, sender, key);
    if (!kept) continue;
    if (kept.fingerprint !== fingerprint) throw reused();
    if (kept.state !== "done") throw inFlight();
    markReplayed(ctx.req);
    return replay(ctx, meta, sender, key, kept);
  }
  if (!claimed) throw inFlight();
  const result = await next();
  await settle(ctx, meta, sender, key, result.ok ? success(meta as Meta, result.data, input) : failure(result.error));
  return result;
}

/** What is kept of a success: its status, Location and body. */
const success = (meta: Meta, data: unknown, input: unknown) => ({ ...successOf(meta, data, input), body: data });

/** What is kept of a failure, or undefined for one of 500 and above, which is not kept. */
function failure(thrown: unknown) {
  const { kind, message, details, headers, status } = appErrorOf(thrown);
  return status >= 500 ? undefined : { status, headers: {}, body: { kind, message, details, headers } };
}

/**
 * Keeps the response for the key's TTL, or gives the key up. A failure here
 * does not change the answer the client gets: the key then stays taken until
 * RUNNING_FOR_MS has passed.
 */
async function settle(
  ctx: Context,
  meta: Meta | undefined,
  sender: string,
  key: string,
  response: { status: number; headers: Record<string, string>; body: unknown } | undefined,
) {
  try {
    if (response) {
      const text = JSON.stringify(response.body ?? null);
      const body = sealed(meta) ? cipherFor(ctx.config).encrypt(text, sealingName(sender, key)) : text;
      await store.keep(ctx.db, sender, key, { ...response, body }, ctx.config.idempotency.ttlMs);
    } else await store.release(ctx.db, sender, key);
  } catch (error) {
    ctx.logger.error({ request_id: ctx.requestId, err: error }, "could not keep the idempotent response");
  }
}
