import type { Config } from "../config.js";
import type { Database, Tx } from "../db/index.js";
import { AppError, appErrorOf, type ErrorDetails, type ErrorKind } from "../errors.js";
import type { Logger } from "../logger.js";
import { cipherFor } from "../secrets/cipher.js";
import { type KeptAnswer, KeyTaken } from "./kept-answer.js";
import { fingerprintOf } from "./key.js";
import { Replayed, replayedHeader } from "./replayed.js";
import { type Claim, type KeptRequest, type KeyHolder, keptColumns, idempotencyStore as store } from "./sql.js";

/**
 * A claimed key is held this long past its last renewal, and renewed this
 * often while its request runs: a request whose process died gives its key
 * up within HELD_FOR_MS, while a live one, however long it waits, keeps it.
 */
export const HEARTBEAT_MS = 2_000;
export const HELD_FOR_MS = 3 * HEARTBEAT_MS;

type Result = { ok: true; data: unknown } | { ok: false; error: unknown };

/** A creating request that carries an Idempotency-Key, and how to run it. */
export interface KeyedCall {
  db: Database;
  config: Config;
  logger: Logger;
  requestId: string;
  /** The key, already checked (idempotencyKeyOf). */
  key: string;
  /** Whom the request counts against: keys of different requesters never collide. */
  requester: string;
  /** The procedure's name and input: with the requester, what makes two requests the same. */
  operation: string;
  input: unknown;
  /** `with-write`: the procedure's write keeps the answer and the key is not held while it runs (meta `idempotency`). */
  mode: "with-write" | "claim-first";
  /** Whether the kept answer is sealed (it may hold a secret). */
  sealed: boolean;
  /** The REST status and headers of a success. */
  success: (data: unknown) => { status: number; headers: Record<string, string> };
  /** Runs the procedure, whose service keeps its answer with `answer`. */
  run: (answer: KeptAnswer) => Promise<Result>;
}

/**
 * Idempotency keys for every creating mutation, REST and tRPC alike
 * (docs/http.md): the first request with a key runs and its answer is kept
 * with the write that created it; the same request again gets that answer
 * (a `Replayed` result, or the kept error with `Idempotent-Replayed`); a
 * different request 422; one while the first still runs 409, or, for a
 * `with-write` procedure, the replay once the first has committed. Answers
 * of 500 and above are not kept, so a retry runs again.
 */
export async function idempotent(call: KeyedCall): Promise<Result> {
  const holder: KeyHolder = {
    sender: call.requester,
    key: call.key,
    fingerprint: fingerprintOf(call.operation, call.input, call.requester),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = call.mode === "with-write" ? await keptWithWrite(call, holder) : await claimedFirst(call, holder);
    if (result !== "taken") return result;
    const answer = await answerFromKey(call, holder);
    if (answer) return answer;
  }
  throw inFlight(undefined);
}

/** What a run ends with when another request holds the key: nothing was written. */
type Taken = "taken";

const isTaken = (result: Result) =>
  !result.ok && (result.error instanceof KeyTaken || (result.error as { cause?: unknown })?.cause instanceof KeyTaken);

/**
 * `with-write`: the procedure's transaction inserts the kept answer beside
 * the creation (on PostgreSQL, perhaps in the creating statement itself);
 * a failure wrote nothing, and its 4xx answer is kept on its own.
 */
async function keptWithWrite(call: KeyedCall, holder: KeyHolder): Promise<Result | Taken> {
  const ttl = call.config.idempotency.ttlMs;
  let kept = false;
  const answer: KeptAnswer = {
    async keep(tx: Tx, data: unknown) {
      if (!(await store.keepNew(tx, holder, keptForm(call, holder, success(call, data)), ttl))) throw new KeyTaken();
      kept = true;
    },
    columns: (data, now) => {
      kept = true;
      return keptColumns(holder, keptForm(call, holder, success(call, data)), now, ttl);
    },
    taken: () => new KeyTaken(),
  };
  const result = await call.run(answer);
  if (isTaken(result)) return "taken";
  if (result.ok) {
    // A success its service kept no answer with is kept after the fact.
    if (kept) return result;
    const keptAfter = await store.keepNew(call.db, holder, keptForm(call, holder, success(call, result.data)), ttl);
    return keptAfter ? result : "taken";
  }
  const response = failure(result.error);
  if (!response) return result;
  return (await store.keepNew(call.db, holder, keptForm(call, holder, response), ttl)) ? result : "taken";
}

/**
 * `claim-first`: the key is claimed before the procedure runs, so a second
 * request sees it at once (409), and renewed while it runs. The service
 * keeps the answer in its creating transaction, which fails (and writes
 * nothing) should the claim have lapsed meanwhile; an answer without a
 * write (a lease that found no task, a refusal) is kept once it is known.
 */
async function claimedFirst(call: KeyedCall, holder: KeyHolder): Promise<Result | Taken> {
  const claim = await store.claim(call.db, holder, HELD_FOR_MS);
  if (!claim) return "taken";
  const ttl = call.config.idempotency.ttlMs;
  let kept = false;
  const answer: KeptAnswer = {
    async keep(tx: Tx, data: unknown) {
      if (!(await store.keepClaimed(tx, claim, keptForm(call, holder, success(call, data)), ttl))) throw new KeyTaken();
      kept = true;
    },
    taken: () => new KeyTaken(),
  };
  const heartbeat = setInterval(() => {
    store.renew(call.db, claim, HELD_FOR_MS).catch((error: unknown) => {
      call.logger.warn({ request_id: call.requestId, err: error }, "could not renew an Idempotency-Key's claim");
    });
  }, HEARTBEAT_MS);
  let result: Result;
  try {
    result = await call.run(answer);
  } finally {
    clearInterval(heartbeat);
  }
  if (isTaken(result)) return "taken";
  if (!kept) await settle(call, holder, claim, result.ok ? success(call, result.data) : failure(result.error));
  return result;
}

/**
 * Keeps the answer of a claim for the key's TTL, or gives the key up (an
 * answer of 500 or above). A failure here does not change the answer the
 * client gets: the key then lapses HELD_FOR_MS later.
 */
async function settle(call: KeyedCall, holder: KeyHolder, claim: Claim, response: Response | undefined) {
  try {
    if (response) {
      await store.keepClaimed(call.db, claim, keptForm(call, holder, response), call.config.idempotency.ttlMs);
    } else await store.release(call.db, claim);
  } catch (error) {
    call.logger.error({ request_id: call.requestId, err: error }, "could not keep the idempotent response");
  }
}

/**
 * The answer to a request whose key is taken: the kept response again, 422
 * for another request's key, 409 while the first still runs; undefined when
 * the key was given up meanwhile (it can be taken again).
 */
async function answerFromKey(call: KeyedCall, holder: KeyHolder): Promise<Result | undefined> {
  const kept = await store.find(call.db, holder.sender, holder.key);
  if (!kept) return undefined;
  if (kept.fingerprint !== holder.fingerprint) throw reused();
  if (kept.state !== "done") throw inFlight(kept);
  return replay(call, holder, kept);
}

/** The kept response again: the result, or the error, the first request ended with. */
function replay(call: KeyedCall, holder: KeyHolder, kept: KeptRequest): Result {
  let text = kept.response_body ?? "";
  // An answer kept in clear may still have been sealed by an older version.
  if (call.sealed || text.startsWith(sealedPrefix)) {
    try {
      text = cipherFor(call.config).decrypt(text, sealingName(holder));
    } catch {
      throw unreadable();
    }
  }
  const body = JSON.parse(text);
  if ((kept.response_status ?? 0) < 400) return { ok: true, data: new Replayed(body) };
  const error = body as KeptError;
  throw new AppError(error.kind, error.message, error.details, { ...error.headers, ...replayedHeader });
}

type KeptError = { kind: ErrorKind; message: string; details?: ErrorDetails; headers?: Record<string, string> };
type Response = { status: number; headers: Record<string, string>; body: unknown };

/** What is kept of a success: its status, Location and body. */
const success = (call: KeyedCall, data: unknown): Response => ({ ...call.success(data), body: data });

/** What is kept of a failure, or undefined for one of 500 and above, which is not kept. */
function failure(thrown: unknown): Response | undefined {
  const { kind, message, details, headers, status } = appErrorOf(thrown);
  return status >= 500 ? undefined : { status, headers: {}, body: { kind, message, details, headers } };
}

/** How a sealed body starts; JSON text never starts so. */
const sealedPrefix = "v1.";

const sealingName = ({ sender, key }: KeyHolder) => `idempotency ${sender} ${key}`;

/** A response as it is kept: its body as JSON text, sealed unless the procedure's answers are kept in clear. */
function keptForm(call: KeyedCall, holder: KeyHolder, response: Response) {
  const text = JSON.stringify(response.body ?? null);
  const body = call.sealed ? cipherFor(call.config).encrypt(text, sealingName(holder)) : text;
  return { status: response.status, headers: response.headers, body };
}

/**
 * 409 while the first request runs. `Retry-After` says when to look again:
 * a second while its claim is being renewed (it may finish any moment);
 * when the claim has gone unrenewed past a heartbeat (its process may have
 * died), the time until it lapses and the key can be taken again.
 */
function inFlight(kept: KeptRequest | undefined) {
  let seconds = 1;
  if (kept) {
    const lapsesIn = Date.parse(kept.expires_at) - Date.now();
    const sinceRenewal = HELD_FOR_MS - lapsesIn;
    if (sinceRenewal > HEARTBEAT_MS * 1.5) seconds = Math.max(1, Math.ceil(lapsesIn / 1000));
  }
  return new AppError(
    "conflict",
    "A request with this Idempotency-Key is still being processed; retry shortly",
    undefined,
    { "Retry-After": String(seconds) },
  );
}

const reused = () =>
  new AppError(
    "idempotency_key_reused",
    "This Idempotency-Key was used for a different request; use a new key for a new request",
  );

const unreadable = () =>
  new AppError(
    "conflict",
    "The response kept for this Idempotency-Key can no longer be read (the service's key changed); use a new key",
  );
