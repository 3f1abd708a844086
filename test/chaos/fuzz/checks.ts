// Is a response what the contract allows? REST responses against the served
// document (status documented, body matching its schema, the headers docs/http.md
// and docs/errors.md require); tRPC responses against tRPC's envelope, docs/errors.md, and
// the REST operation's schema for their result data; event streams by their
// head and first message.
import { type ObservedResponse, responseChecker } from "../../helpers/openapi-responses.js";
import type { ServedDocument } from "./document.js";
import type { FuzzRequest } from "./request.js";
import type { Observed } from "./send.js";
import type { Procedure } from "./trpc.js";

type Check = (request: FuzzRequest, observed: Observed) => string[];

const header = (observed: Observed, name: string) => {
  const value = observed.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
};

const parse = (body: string): unknown => {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
};

/** What every response must carry, whatever route answered it (docs/http.md, docs/errors.md). */
function contractHeaders(observed: Observed): string[] {
  const problems: string[] = [];
  const type = header(observed, "content-type");
  if (!header(observed, "x-request-id")) problems.push("no X-Request-Id");
  if (observed.body !== "" && !observed.stream && !/^application\/json; ?charset=utf-8$/i.test(type ?? "")) {
    problems.push(`Content-Type ${type ?? "absent"} on a body, not application/json; charset=utf-8`);
  }
  if (observed.status === 204 && (observed.body !== "" || type)) problems.push("204 with a body or a Content-Type");
  if (observed.status === 401 && !header(observed, "www-authenticate")) problems.push("401 without WWW-Authenticate");
  if ((observed.status === 429 || observed.status === 503) && !header(observed, "retry-after")) {
    problems.push(`${observed.status} without Retry-After`);
  }
  if (observed.status === 201 && !header(observed, "location")) problems.push("201 without Location");
  return problems;
}

const detail = (observed: Observed, text: string) =>
  observed.body === JSON.stringify({ detail: text })
    ? []
    : [`body ${observed.body.slice(0, 120)}, not {"detail":"${text}"}`];

/**
 * An event stream (docs/api/events.md), closed after its first message: its status
 * documented with a `text/event-stream` body, that content type, and
 * `retry: 3000` as its first message.
 */
function eventStreamProblems(document: ServedDocument, method: string, path: string, observed: Observed): string[] {
  const operation = `${method} ${path} → ${observed.status}`;
  const responses = document.paths[path]?.[method.toLowerCase()]?.responses as
    | Record<string, { content?: Record<string, unknown> }>
    | undefined;
  if (!responses?.[String(observed.status)]?.content?.["text/event-stream"])
    return [`${operation}: an event stream, not documented`];
  const problems: string[] = [];
  const type = header(observed, "content-type");
  if (!/^text\/event-stream(;|$)/i.test(type ?? "")) problems.push(`${operation}: Content-Type ${type}`);
  if (!observed.body.startsWith("retry: 3000\n\n"))
    problems.push(`${operation}: first message ${JSON.stringify(observed.body.slice(0, 80))}, not retry: 3000`);
  return problems;
}

export function restCheck(document: ServedDocument): Check {
  const check = responseChecker(document);
  return (request, observed) => {
    const expect = request.expect;
    const problems = contractHeaders(observed);
    const response: ObservedResponse = {
      method: request.method,
      path: "",
      status: observed.status,
      contentType: header(observed, "content-type") ?? null,
      body: observed.body,
    };
    if (expect.kind === "operation" && observed.stream) {
      problems.push(...eventStreamProblems(document, request.method, expect.path, observed));
    } else if (expect.kind === "operation") {
      problems.push(...check({ ...response, path: expect.path }));
    } else if (expect.kind === "head") {
      const documented = document.paths[expect.path]?.get?.responses as Record<string, unknown> | undefined;
      if (!documented?.[String(observed.status)])
        problems.push(`HEAD ${expect.path} → ${observed.status}: not documented for GET`);
      if (observed.body !== "") problems.push("HEAD answered with a body");
    } else if (expect.kind === "wrongMethod") {
      if (observed.status === 405) {
        if (!header(observed, "allow")) problems.push("405 without Allow");
        problems.push(...detail(observed, "Method Not Allowed"));
      } else if (!(expect.hostileId && observed.status === 404)) {
        problems.push(`${observed.status} to a method the path does not have, not 405`);
      }
    } else if (expect.kind === "unknownPath") {
      if (observed.status !== 404) problems.push(`${observed.status} for an unknown path, not 404`);
      problems.push(...detail(observed, "Not Found"));
    }
    return problems.map((p) => `${request.label}: ${p}`);
  };
}

/** tRPC's wire format, with docs/clients.md's error data. */
export function trpcCheck(document: ServedDocument, procedures: Procedure[]): Check {
  const check = responseChecker(document);
  const byPath = new Map(procedures.map((p) => [p.path, p]));

  const envelope = (item: unknown, name: string | undefined, status: number, single: boolean): string[] => {
    if (typeof item !== "object" || item === null) return [`item ${JSON.stringify(item)} is no envelope`];
    if (JSON.stringify(item).includes('"stack"')) return ["a stack in the response"];
    if ("result" in item) {
      const procedure = name ? byPath.get(name) : undefined;
      const operation = procedure?.rest;
      if (!operation) return [];
      let data = (item.result as { data?: unknown } | null)?.data;
      if (procedure.paged) {
        // A page over tRPC; its items are what REST answers.
        const page = data as { items?: unknown; next_cursor?: unknown; total?: unknown } | null;
        if (!page || !Array.isArray(page.items)) return ["result data: a list's page has no items"];
        if (page.next_cursor !== null && typeof page.next_cursor !== "string") return ["result data: bad next_cursor"];
        if (page.total !== null && !Number.isInteger(page.total)) return ["result data: bad total"];
        data = page.items;
      }
      const responses = document.paths[operation.path]?.[operation.method.toLowerCase()]?.responses ?? {};
      const success = Number(Object.keys(responses).find((s) => s.startsWith("2")) ?? 200);
      // null where REST answers 204 (a lease request that found no task): REST's empty body.
      const noContent = data === null && responses["204"] !== undefined;
      return check({
        method: operation.method,
        path: operation.path,
        status: noContent ? 204 : success,
        contentType: noContent ? null : "application/json",
        body: data === undefined || noContent ? "" : JSON.stringify(data),
      }).map((p) => `result data: ${p}`);
    }
    if (!("error" in item)) return ["neither result nor error"];
    const error = item.error as { message?: unknown; code?: unknown; data?: Record<string, unknown> } | null;
    const problems: string[] = [];
    if (typeof error?.message !== "string") problems.push("error.message is not a string");
    else if (/^\s*\[\s*\{/.test(error.message)) problems.push("error.message is a serialized list of issues");
    if (typeof error?.code !== "number") problems.push("error.code is not a number");
    const data = error?.data;
    if (typeof data?.code !== "string" || typeof data?.httpStatus !== "number")
      problems.push("error.data lacks code/httpStatus");
    else if (single && data.httpStatus !== status)
      problems.push(`error.data.httpStatus ${data.httpStatus} on a ${status}`);
    if (typeof data?.error !== "string") problems.push("error.data.error (the error kind) missing");
    return problems;
  };

  return (request, observed) => {
    if (request.expect.kind !== "trpc") return [];
    const { procedures: names, batch } = request.expect;
    const problems: string[] = [];
    if (!header(observed, "x-request-id")) problems.push("no X-Request-Id");
    const type = header(observed, "content-type");
    if (!/^application\/json/i.test(type ?? "")) problems.push(`Content-Type ${type ?? "absent"}, not JSON`);
    const body = parse(observed.body);
    if (body === undefined) problems.push(`body is not JSON: ${observed.body.slice(0, 80)}`);
    else if (batch && Array.isArray(body)) {
      if (body.length !== names.length) problems.push(`${body.length} results for ${names.length} calls`);
      for (const [i, item] of body.entries()) problems.push(...envelope(item, names[i], observed.status, false));
    } else {
      const single = !batch || observed.status >= 400;
      problems.push(...envelope(body, batch ? undefined : names[0], observed.status, single));
    }
    return problems.map((p) => `${request.label} → ${observed.status}: ${p}`);
  };
}
