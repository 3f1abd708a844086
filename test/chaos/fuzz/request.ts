// What the fuzzer sends, as plain data: generated ahead by fast-check, with
// references to "an agent (or task) that exists" resolved only when sent.

/** An existing agent, task, or the agent that owns a task, picked from what exists when the request is sent. */
export class Ref {
  constructor(
    readonly kind: "agent" | "task" | "taskAgent",
    readonly pick: number,
  ) {}
  toString() {
    return `<${this.kind}#${this.pick}>`;
  }
}

export type Body =
  | { kind: "json"; value: unknown }
  | { kind: "text"; text: string }
  | { kind: "bytes"; bytes: Buffer }
  /** A JSON body just over 1 MiB (the default limit). */
  | { kind: "oversize" };

/** A query-string part: sent as is (already encoded), or a JSON value encoded at send time. */
export type QueryPart = string | { name: string; json: unknown };

/** What the response is checked against. */
export type Expectation =
  | { kind: "operation"; method: string; path: string }
  | { kind: "head"; path: string }
  /** 405 with Allow; 404 also passes when an id is hostile (`/agents/..` is no known path). */
  | { kind: "wrongMethod"; hostileId: boolean }
  | { kind: "unknownPath" }
  | { kind: "trpc"; procedures: string[]; batch: boolean }
  /** A request line no HTTP client would send: only "no 5xx, no crash". */
  | { kind: "raw" };

export interface FuzzRequest {
  /** For the report: "PATCH /agents/{agent_id}", "tRPC agents.get,agents.list". */
  label: string;
  method: string;
  /** Path segments after the leading slash; a string is sent as is. */
  path: (string | Ref)[];
  query: QueryPart[];
  headers: Record<string, string>;
  body?: Body;
  /** The whole request text, for `raw` requests only. */
  raw?: string;
  expect: Expectation;
}

/** Requests that may change data: the ones whose rejection must change nothing. */
export const isWrite = (request: FuzzRequest) => !["GET", "HEAD"].includes(request.method);
