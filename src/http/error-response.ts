import { TRPCError } from "@trpc/server";
import { AppError, type FieldIssue } from "../errors.js";

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export const internalErrorBody = { error: "internal_error", message: "An unexpected error occurred" } as const;

const internalError: ErrorResponse = { status: 500, headers: {}, body: internalErrorBody };

export const validationResponse = (issues: FieldIssue[]): ErrorResponse => ({
  status: 400,
  headers: {},
  body: {
    error: "validation_error",
    message: `Request validation failed: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`,
    details: { issues },
  },
});

export const notFoundResponse = (detail = "Not Found"): ErrorResponse => ({
  status: 404,
  headers: {},
  body: { detail },
});

const simple = (status: number, error: string, message: string): ErrorResponse => ({
  status,
  headers: {},
  body: { error, message },
});

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
}

const fieldIssues = (issues: ZodLikeIssue[]): FieldIssue[] =>
  issues.map((issue) => ({
    field: issue.path.length ? issue.path.map(String).join(".") : "body",
    message: issue.message,
  }));

function fromAppError(error: AppError): ErrorResponse {
  const headers = error.headers ?? {};
  switch (error.kind) {
    case "not_found":
    case "unauthenticated":
    case "forbidden":
      return { status: statusOf[error.kind], headers, body: { detail: error.message } };
    case "validation_error":
      return validationResponse((error.details?.issues as FieldIssue[]) ?? [{ field: "body", message: error.message }]);
    default:
      return {
        status: statusOf[error.kind],
        headers,
        body: { error: error.kind, message: error.message, ...(error.details ? { details: error.details } : {}) },
      };
  }
}

const statusOf = {
  validation_error: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
} as const;

function fromTrpcError(error: TRPCError): ErrorResponse {
  const cause = error.cause;
  if (cause instanceof AppError) return fromAppError(cause);
  switch (error.code) {
    case "BAD_REQUEST":
      if (cause && "issues" in cause && Array.isArray(cause.issues))
        return validationResponse(fieldIssues(cause.issues));
      return validationResponse([{ field: "body", message: "Invalid request" }]);
    case "PARSE_ERROR":
      return validationResponse([{ field: "body", message: "Malformed JSON" }]);
    case "NOT_FOUND":
      return notFoundResponse();
    case "UNSUPPORTED_MEDIA_TYPE":
      return simple(415, "unsupported_media_type", "Request body must be application/json");
    case "PAYLOAD_TOO_LARGE":
      return simple(413, "payload_too_large", "Request body is too large");
    default:
      return internalError;
  }
}

/** Errors raised by express's body parser carry a `type`. */
function fromBodyParserError(error: { type: string }): ErrorResponse | undefined {
  switch (error.type) {
    case "entity.parse.failed":
      return validationResponse([{ field: "body", message: "Malformed JSON" }]);
    case "entity.verify.failed":
      return validationResponse([{ field: "body", message: "Body is not valid UTF-8" }]);
    case "entity.too.large":
      return simple(413, "payload_too_large", "Request body is too large");
    case "charset.unsupported":
    case "encoding.unsupported":
      return simple(415, "unsupported_media_type", "Request body must be UTF-8 JSON");
    case "request.aborted":
    case "request.size.invalid":
      return validationResponse([{ field: "body", message: "Request body is incomplete" }]);
    default:
      return undefined;
  }
}

/** The one place where any error becomes the contract's status, headers and body (SPEC §5). */
export function errorResponse(error: unknown): ErrorResponse {
  if (error instanceof AppError) return fromAppError(error);
  if (error instanceof TRPCError) return fromTrpcError(error);
  if (error && typeof error === "object" && "type" in error && typeof error.type === "string") {
    return fromBodyParserError(error as { type: string }) ?? internalError;
  }
  return internalError;
}
