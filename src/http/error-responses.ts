import { TRPCError } from "@trpc/server";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { isDatabaseUnavailable } from "../db/index.js";
import {
  AppError,
  type ErrorKind,
  errorCatalogue,
  errorKinds,
  type FieldIssue,
  internalErrorMessage,
  validationError,
} from "../errors.js";

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export const databaseUnavailable = () =>
  new AppError("unavailable", "The database is unavailable; retry shortly", undefined, { "Retry-After": "5" });

const internalError = () => new AppError("internal_error", internalErrorMessage);

const malformedInput = () => validationError([{ field: "input", message: "Malformed JSON" }]);

/** The kind a tRPC code stands for: the first row with that code (431 borrows 413's code, see the catalogue). */
const kindOfTrpcCode = new Map<string, ErrorKind>();
for (const kind of errorKinds)
  if (!kindOfTrpcCode.has(errorCatalogue[kind].trpc)) kindOfTrpcCode.set(errorCatalogue[kind].trpc, kind);

type IssueLike = { path?: readonly (PropertyKey | { key: PropertyKey })[]; message: string };

/** A validation library's issues as the contract's `{field, message}` (SPEC §5). */
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

/**
 * The body tRPC's error formatter (trpc/init.ts) gives an error, for a
 * request answered before tRPC saw it: one error for the whole request, as
 * tRPC answers a request it cannot run.
 */
export function trpcErrorBody(error: AppError) {
  const { status, trpc } = errorCatalogue[error.kind];
  return {
    error: {
      message: error.message,
      code: TRPC_ERROR_CODES_BY_KEY[trpc],
      data: { code: trpc, httpStatus: status, error: error.kind, ...(error.details ? { details: error.details } : {}) },
    },
  };
}

/** The REST status, headers and body of an error (SPEC §5). */
export function restError(error: AppError): ErrorResponse {
  const headers = error.headers ?? {};
  const { status, body } = errorCatalogue[error.kind];
  if (body === "detail") return { status, headers, body: { detail: error.message } };
  return {
    status,
    headers,
    body: { error: error.kind, message: error.message, ...(error.details ? { details: error.details } : {}) },
  };
}

export const notFoundError = () => new AppError("not_found", "Not Found");

export const methodNotAllowedError = (allowed: readonly string[]) =>
  new AppError("method_not_allowed", "Method Not Allowed", undefined, { Allow: allowed.join(", ") });
