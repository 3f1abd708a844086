import { TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { joined } from "../db/index.js";
import { AppError, type ErrorDetails, type ErrorKind } from "../errors.js";
import { appErrorOf } from "../http/error-responses.js";
import { cipherFor } from "../secrets/cipher-for.js";
import type { Context } from "../trpc/context.js";
import type { ProcedureMeta } from "../trpc/init.js";
import type { KeyInStatement } from "./in-statement.js";
import { fingerprintOf, idempotencyKeyOf } from "./key.js";
import { markReplayed } from "./replayed.js";
import { senderOf } from "./sender.js";
import { type KeptRequest, keptColumns, idempotencyStore as store } from "./sql.js";

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
  next: (opts?: { ctx: Partial<Pick<Context, "db" | "keyInStatement">> }) => Promise<Result>;
}

type Result = { ok: true; data: unknown } | { ok: false; error: unknown };

/** A request with an Idempotency-Key, as the two modes below handle it. */
interface Keyed {
  ctx: Context;
  meta: Meta | undefined;
  input: unknown;
  sender: string;
  key: string;
  fingerprint: string;
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
 * different one 422; one while the first still runs 409 (or, where the
 * response is kept in the creating transaction, the replay once that
 * transaction has committed). Responses of 500 and above are not kept, so a
 * retry runs again.
 */
export async function idempotency({ ctx, meta, path, type, getRawInput, next }: MiddlewareOptions) {
  if (type !== "mutation" || !creates(meta) || !ctx.req) return next();
  const key = idempotencyKeyOf(ctx.req.headers["idempotency-key"]);
  if (key === undefined) return next();
  const input = await getRawInput();
  const sender = senderOf(ctx);
  const request = { ctx, meta, input, sender, key, fingerprint: fingerprintOf(path, input, sender) };
  if (meta?.keyInStatement && ctx.db.provider === "postgresql")
    return keptWithWrites(request, inStatement(request, next));
  if (meta?.keyInTransaction) return keptWithWrites(request, inTransaction(request, next));
  return claimedFirst(request, next);
}

/**
 * The answer to a request whose key is taken: the kept response again, 422
 * for another request's key, 409 while the first still runs; undefined when
 * the key was given up meanwhile (it can be taken again).
 */
async function answerFromKey({ ctx, meta, sender, key, fingerprint }: Keyed) {
  const kept = await store.find(ctx.db, sender, key);
  if (!kept) return undefined;
  if (kept.fingerprint !== fingerprint) throw reused();
  if (kept.state !== "done") throw inFlight();
  markReplayed(ctx.req);
  return replay(ctx, meta, sender, key, kept);
}

/**
 * The key is claimed first, in a statement of its own, so a second request
 * sees it at once (409); the response is kept once the procedure is done.
 * For procedures that may wait (a lease's long poll) or reach beyond the
 * database (a webhook's address is resolved), which must not hold a
 * transaction open meanwhile.
 */
async function claimedFirst(request: Keyed, next: () => Promise<Result>) {
  const { ctx, meta, input, sender, key, fingerprint } = request;
  // A key released by a failed first request between the claim and the read is simply claimed again.
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await store.claim(ctx.db, sender, key, fingerprint, RUNNING_FOR_MS)) {
      const result = await next();
      await settle(
        ctx,
        meta,
        sender,
        key,
        result.ok ? success(meta as Meta, result.data, input) : failure(result.error),
      );
      return result;
    }
    const answer = await answerFromKey(request);
    if (answer) return answer;
  }
  throw inFlight();
}

/**
 * One run of the procedure with its answer kept by its own writes: its
 * result, or "taken" when another request holds the key, in which case
 * nothing was written.
 */
type KeepingRun = () => Promise<Result | "taken">;

/**
 * The procedure's writes and the kept response commit together (meta
 * `keyInTransaction`, `keyInStatement`): one commit instead of three. A
 * second request with the key, sent while the first runs, waits for the
 * first one's commit and then gets its response replayed: never do both
 * commit. A failure of the procedure writes nothing, and its answer is then
 * kept as a first request's would be.
 */
async function keptWithWrites(request: Keyed, run: KeepingRun) {
  const { ctx, meta, sender, key } = request;
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await run();
    if (result !== "taken") {
      if (result.ok) return result;
      const response = failure(result.error);
      if (!response) return result;
      const kept = keptForm(ctx, meta, sender, key, response);
      if (await store.keepNew(ctx.db, request, kept, ctx.config.idempotency.ttlMs)) return result;
    }
    const answer = await answerFromKey(request);
    if (answer) return answer;
  }
  throw inFlight();
}

/** Rolls the transaction back: with the procedure's failure, or with none when the key was taken. */
class RollBack {
  constructor(readonly failed?: Result & { ok: false }) {}
}

/** `keyInTransaction`: the kept response is inserted in the transaction the procedure's writes run in. */
const inTransaction =
  (request: Keyed, next: MiddlewareOptions["next"]): KeepingRun =>
  async () => {
    const { ctx, meta, input, sender, key } = request;
    try {
      return await ctx.db.transaction(async (tx) => {
        const result = await next({ ctx: { db: joined(ctx.db, tx) } });
        if (!result.ok) throw new RollBack(result);
        const kept = keptForm(ctx, meta, sender, key, success(meta as Meta, result.data, input));
        if (!(await store.keepNew(tx, request, kept, ctx.config.idempotency.ttlMs))) throw new RollBack();
        return result;
      });
    } catch (error) {
      if (!(error instanceof RollBack)) throw error;
      return error.failed ?? "taken";
    }
  };

/** What a service throws when its creating statement found the key held. */
class KeyTaken extends Error {}

/** `keyInStatement`: the procedure's creating statement inserts the kept response itself. */
const inStatement =
  (request: Keyed, next: MiddlewareOptions["next"]): KeepingRun =>
  async () => {
    const { ctx, meta, input, sender, key } = request;
    const keyInStatement: KeyInStatement = {
      columns: (data, now) =>
        keptColumns(
          request,
          keptForm(ctx, meta, sender, key, success(meta as Meta, data, input)),
          now,
          ctx.config.idempotency.ttlMs,
        ),
      taken: () => new KeyTaken(),
    };
    const result = await next({ ctx: { keyInStatement } });
    return !result.ok && result.error instanceof TRPCError && result.error.cause instanceof KeyTaken ? "taken" : result;
  };

/** What is kept of a success: its status, Location and body. */
const success = (meta: Meta, data: unknown, input: unknown) => ({ ...successOf(meta, data, input), body: data });

/** What is kept of a failure, or undefined for one of 500 and above, which is not kept. */
function failure(thrown: unknown) {
  const { kind, message, details, headers, status } = appErrorOf(thrown);
  return status >= 500 ? undefined : { status, headers: {}, body: { kind, message, details, headers } };
}

type Response = { status: number; headers: Record<string, string>; body: unknown };

/** A response as it is kept: its body as JSON text, sealed unless the procedure's answers are kept in clear. */
function keptForm(ctx: Context, meta: Meta | undefined, sender: string, key: string, response: Response) {
  const text = JSON.stringify(response.body ?? null);
  const body = sealed(meta) ? cipherFor(ctx.config).encrypt(text, sealingName(sender, key)) : text;
  return { ...response, body };
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
  response: Response | undefined,
) {
  try {
    if (response)
      await store.keep(ctx.db, sender, key, keptForm(ctx, meta, sender, key, response), ctx.config.idempotency.ttlMs);
    else await store.release(ctx.db, sender, key);
  } catch (error) {
    ctx.logger.error({ request_id: ctx.requestId, err: error }, "could not keep the idempotent response");
  }
}
