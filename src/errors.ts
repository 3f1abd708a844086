import { TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { isDatabaseUnavailable } from "./db/unavailable.js";

/**
 * THE error catalogue: every kind of error the service answers with, one row
 * each. REST bodies (http/error-responses.ts), tRPC codes (trpc/procedures.ts),
 * the data versions' formats (http/versioned/formats.ts) and the OpenAPI
 * document (http/openapi/errors.ts) all read this table, so they cannot drift apart.
 *
 * - `status`: the HTTP status on every transport.
 * - `trpc`: the tRPC code, which gives the same status over /trpc.
 * - `v1`: the `code` of the versioned groups' v1 format (docs/api/data.md).
 * - `body`: the REST body: `detail` is `{"detail": message}`; `error` is
 *   `{"error": kind, "message", "details"?}` (docs/errors.md).
 * - `response`: the document's response component, its description and the
 *   headers this kind always carries.
 */
export const errorCatalogue = {
  validation_error: {
    status: 400,
    trpc: "BAD_REQUEST",
    v1: "VALIDATION_ERROR",
    body: "error",
    response: { name: "ValidationError", description: "Validation error" },
  },
  unauthenticated: {
    status: 401,
    trpc: "UNAUTHORIZED",
    v1: "UNAUTHORIZED",
    body: "detail",
    response: { name: "Unauthorized", description: "Missing or invalid credentials", headers: ["WWW-Authenticate"] },
  },
  forbidden: {
    status: 403,
    trpc: "FORBIDDEN",
    v1: "FORBIDDEN",
    body: "error",
    response: {
      name: "Forbidden",
      description: "A credential without the scope the operation needs (details.required_scope), or an invalid API key",
    },
  },
  // The same status as `forbidden`, in the `{"detail"}` body that every client of an API key already reads.
  invalid_api_key: {
    status: 403,
    trpc: "FORBIDDEN",
    v1: "FORBIDDEN",
    body: "detail",
    response: { name: "Forbidden", description: "Invalid API key" },
  },
  not_found: {
    status: 404,
    trpc: "NOT_FOUND",
    v1: "NOT_FOUND",
    body: "detail",
    response: { name: "NotFound", description: "Not found" },
  },
  method_not_allowed: {
    status: 405,
    trpc: "METHOD_NOT_SUPPORTED",
    v1: "METHOD_NOT_ALLOWED",
    body: "detail",
    response: {
      name: "MethodNotAllowed",
      description: "The path does not answer this method; Allow lists the methods it does",
      headers: ["Allow"],
    },
  },
  request_timeout: {
    status: 408,
    trpc: "TIMEOUT",
    v1: "REQUEST_TIMEOUT",
    body: "error",
    response: {
      name: "RequestTimeout",
      description: "The request's head or body did not arrive in time; the connection is closed",
    },
  },
  conflict: {
    status: 409,
    trpc: "CONFLICT",
    v1: "CONFLICT",
    body: "error",
    response: { name: "Conflict", description: "Conflict" },
  },
  precondition_failed: {
    status: 412,
    trpc: "PRECONDITION_FAILED",
    v1: "PRECONDITION_FAILED",
    body: "error",
    response: {
      name: "PreconditionFailed",
      description: "If-Match names another version than the current one (details.current_version); nothing changed",
      headers: ["ETag"],
    },
  },
  payload_too_large: {
    status: 413,
    trpc: "PAYLOAD_TOO_LARGE",
    v1: "PAYLOAD_TOO_LARGE",
    body: "error",
    response: { name: "PayloadTooLarge", description: "Request body too large" },
  },
  unsupported_media_type: {
    status: 415,
    trpc: "UNSUPPORTED_MEDIA_TYPE",
    v1: "UNSUPPORTED_MEDIA_TYPE",
    body: "error",
    response: { name: "UnsupportedMediaType", description: "Request body is not uncompressed JSON" },
  },
  idempotency_key_reused: {
    status: 422,
    trpc: "UNPROCESSABLE_CONTENT",
    v1: "IDEMPOTENCY_KEY_REUSED",
    body: "error",
    response: {
      name: "IdempotencyKeyReused",
      description: "The Idempotency-Key was already used for another request (method, path, body or sender)",
    },
  },
  // tRPC has no code for 431: the nearest is PAYLOAD_TOO_LARGE. This error never passes through
  // tRPC (Node's parser refused the request before any route saw it), so /trpc still answers 431.
  headers_too_large: {
    status: 431,
    trpc: "PAYLOAD_TOO_LARGE",
    v1: "HEADERS_TOO_LARGE",
    body: "error",
    response: { name: "HeadersTooLarge", description: "The request line and headers are over the size limit" },
  },
  rate_limited: {
    status: 429,
    trpc: "TOO_MANY_REQUESTS",
    v1: "RATE_LIMITED",
    body: "error",
    response: { name: "TooManyRequests", description: "Rate limit hit", headers: ["Retry-After"] },
  },
  internal_error: {
    status: 500,
    trpc: "INTERNAL_SERVER_ERROR",
    v1: "INTERNAL_ERROR",
    body: "error",
    response: { name: "InternalError", description: "Unexpected error" },
  },
  unavailable: {
    status: 503,
    trpc: "SERVICE_UNAVAILABLE",
    v1: "SERVICE_UNAVAILABLE",
    body: "error",
    response: { name: "Unavailable", description: "Overloaded or database unreachable", headers: ["Retry-After"] },
  },
} as const satisfies Record<string, ErrorRow>;

export interface ErrorRow {
  status: number;
  trpc: TRPC_ERROR_CODE_KEY;
  v1: string;
  body: "detail" | "error";
  response: { name: string; description: string; headers?: readonly string[] };
}

export type ErrorKind = keyof typeof errorCatalogue;
export const errorKinds = Object.keys(errorCatalogue) as ErrorKind[];

export interface FieldIssue {
  field: string;
  message: string;
}

/** What an error tells beyond its message: `issues` for a validation error, the facts of a conflict, … */
export type ErrorDetails = { issues?: FieldIssue[] } & Record<string, unknown>;

/** The one error type services throw; the catalogue says what each transport makes of it. */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details?: ErrorDetails,
    /** Extra response headers, e.g. Retry-After or WWW-Authenticate. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "AppError";
  }

  get status(): number {
    return errorCatalogue[this.kind].status;
  }
}

/** The message of every unexpected error, on every transport: it never says what went wrong inside. */
export const internalErrorMessage = "An unexpected error occurred";

/** `{"detail":"Agent not found"}` for `notFound("Agent")`; a path that names nothing is `{"detail":"Not Found"}`. */
export const notFound = (what?: string) => new AppError("not_found", what ? `${what} not found` : "Not Found");

export const methodNotAllowed = (allowed: readonly string[]) =>
  new AppError("method_not_allowed", "Method Not Allowed", undefined, { Allow: allowed.join(", ") });

export const databaseUnavailable = () =>
  new AppError("unavailable", "The database is unavailable; retry shortly", undefined, { "Retry-After": "5" });

export const validationError = (issues: FieldIssue[]) =>
  new AppError(
    "validation_error",
    `Request validation failed: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`,
    {
      issues,
    },
  );

const internalError = () => new AppError("internal_error", internalErrorMessage);

const malformedInput = () => validationError([{ field: "input", message: "Malformed JSON" }]);

/** The kind a tRPC code stands for: the first row with that code (431 borrows 413's code, see the catalogue). */
const kindOfTrpcCode = new Map<string, ErrorKind>();
for (const kind of errorKinds)
  if (!kindOfTrpcCode.has(errorCatalogue[kind].trpc)) kindOfTrpcCode.set(errorCatalogue[kind].trpc, kind);

type IssueLike = { path?: readonly (PropertyKey | { key: PropertyKey })[]; message: string };

/** A validation library's issues as the contract's `{field, message}`. */
export const fieldIssues = (issues: readonly IssueLike[]): FieldIssue[] =>
  issues.map((issue) => {
    const path = (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part));
    return { field: path.length > 0 ? path.join(".") : "body", message: issue.message };
  });

const hasIssues = (cause: unknown): cause is { issues: IssueLike[] } =>
  typeof cause === "object" && cause !== null && "issues" in cause && Array.isArray(cause.issues);

/**
 * Any error as the AppError it stands for. Services throw AppError; tRPC wraps
 * it, or raises its own (input validation, malformed input, unknown procedure);
 * a database that cannot be reached is `unavailable`; anything else is an
 * unexpected `internal_error` whose text is never shown.
 */
export function appErrorOf(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  if (!(error instanceof TRPCError)) return internalError();
  if (error.cause instanceof AppError) return error.cause;
  if (isDatabaseUnavailable(error.cause)) return databaseUnavailable();
  switch (error.code) {
    case "BAD_REQUEST":
      if (hasIssues(error.cause)) return validationError(fieldIssues(error.cause.issues));
      // /trpc parses its own input (REST bodies are read by http/body.ts); the parser's words are not shown.
      if (error.cause instanceof SyntaxError) return malformedInput();
      return validationError([{ field: "input", message: error.message }]);
    case "PARSE_ERROR":
      return malformedInput();
    case "INTERNAL_SERVER_ERROR":
      return internalError();
    default: {
      // tRPC's own errors (unknown procedure, wrong method, …): its message is its own, never a library's.
      const kind: ErrorKind | undefined = kindOfTrpcCode.get(error.code);
      return kind ? new AppError(kind, error.message) : internalError();
    }
  }
}

/** The error as a TRPCError whose code carries its status; the AppError stays its cause. */
export const trpcErrorOf = (error: AppError) =>
  new TRPCError({ code: errorCatalogue[error.kind].trpc, message: error.message, cause: error });
