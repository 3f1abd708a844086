import type { OpenApiMeta } from "trpc-to-openapi";
import type { Scope } from "../../shared/scopes.js";

/**
 * What an operation asks of its caller. `project`: a resource of the acting
 * project, needing the meta's `scope`; `caller`: any caller AUTH_POLICY lets
 * through, which the procedure judges itself (the projects a caller may act
 * in); `user`: a signed-in user whatever the policy.
 */
export type Access = "project" | "caller" | "user";

export { type Scope, scopes } from "../../shared/scopes.js";

/** What the REST layer (http/rest/) and the document read from a procedure besides its `openapi` meta. */
export type ProcedureMeta = {
  /** Success status of the REST operation when it is not 200. */
  successStatus?: 201 | 204;
  /** Location header of a 201 response, from the created resource. */
  location?: (data: { id: string; agent_id?: string }) => string;
  /**
   * A second success that the result chooses instead of `successStatus`
   * when `when(data, input)` holds, documented beside it: 202 (same body:
   * accepted, not done yet) or 204 (no body; the procedure returns null).
   */
  otherSuccess?: { status: 202 | 204; description: string; when: (data: unknown, input: unknown) => boolean };
  /**
   * More headers of a REST success, from the procedure's result: a `Link` to
   * the next page … (meta is typed for the whole router, so the function
   * narrows `data` and `input` itself).
   */
  responseHeaders?: (data: unknown, input: unknown) => Record<string, string>;
  /**
   * The result is a versioned resource (docs/http.md, conditional requests):
   * REST answers with `ETag: "<version>"`, a GET with a matching
   * `If-None-Match` is 304, and PUT/PATCH/DELETE read `If-Match`.
   */
  versioned?: true;
  /**
   * The result is a page, `{items, next_cursor, total}`: REST answers its
   * items as the body, `next_cursor` as `Link: <…after=…>; rel="next"` and
   * `total` as `X-Total-Count`; the document shows the items and both headers,
   * and its metadata filter as `metadata[key]`.
   */
  paged?: true;
  /**
   * `"sse"`: the procedure (a GET) returns an async iterable of
   * `ServerSentEvent` (trpc/server-sent-events.ts), which REST writes as
   * `text/event-stream` until it ends or the client leaves; the procedure's
   * `signal` aborts when the client leaves.
   */
  stream?: "sse";
  /** The document's media type object for a `stream: "sse"` success (`text/event-stream`). */
  streamContent?: Record<string, unknown>;
  /**
   * The procedure may wait a long time for something to happen (a lease's
   * `wait_seconds`): over REST it holds no request slot while it waits, and
   * counts against MAX_LONG_POLLS instead.
   */
  longPoll?: true;
  /**
   * How a creation keeps its answer for an Idempotency-Key (src/idempotency/).
   * `with-write`: its service keeps the answer in the transaction of its one
   * short write, and the key is not held while it runs: a second request
   * with the key waits for that commit and gets the answer replayed. Absent,
   * the key is held from the start (a second request gets 409 until the
   * first is done), which a procedure that waits (a long poll) or reaches
   * beyond the database (a webhook's address is resolved) needs; its service
   * still keeps the answer in its creating transaction where it has one.
   */
  idempotency?: "with-write";
  /**
   * The answers never hold a secret, so the copy kept for an Idempotency-Key
   * is stored as it is rather than sealed: sealing is for answers such as a
   * webhook's creation, which holds its signing secret.
   */
  keptInClear?: true;
  /** Set by the procedure builders (trpc/procedures.ts): what the operation asks of its caller. */
  access?: Access;
  /** What a `project` operation needs of its credential; checked on REST and tRPC, and shown in the document. */
  scope?: Scope;
  /**
   * A second scope that suffices for some inputs: a worker with `tasks:work`
   * finishing its leased task through `tasks.update`. Documented beside `scope`.
   */
  alsoScope?: { scope: Scope; when: (input: unknown) => boolean; description: string };
  /**
   * The project is the one the path names (`/projects/{project_id}/…`), not
   * the credential's own or `X-Project-Id`'s; still one the caller may act in.
   */
  projectInPath?: true;
  /**
   * A versioned data route: served over HTTP by the versioned routes' plug-in
   * (http/versioned/), with this version's formats, headers and caching, at
   * its path and at the root.
   */
  apiVersion?: 1 | 2;
};

export type Meta = OpenApiMeta<ProcedureMeta>;

/** Whether the procedure creates something, so honours Idempotency-Key: a REST POST answered 201. */
export const creates = (meta: Meta | undefined) => meta?.openapi?.method === "POST" && meta.successStatus === 201;

/**
 * The REST status of a success and its `Location`, from the meta and the
 * result: what REST answers, and what is kept for an Idempotency-Key.
 */
export function successOf(
  meta: Meta,
  data: unknown,
  input: unknown,
): { status: number; headers: Record<string, string> } {
  const { successStatus = 200, otherSuccess, location } = meta;
  const status = otherSuccess?.when(data, input) ? otherSuccess.status : successStatus;
  const headers: Record<string, string> =
    status === 201 && location ? { Location: location(data as Parameters<typeof location>[0]) } : {};
  return { status, headers };
}
