import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { type AppError, errorCatalogue } from "../errors.js";

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/**
 * The body tRPC's error formatter (trpc/procedures.ts) gives an error, for a
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

/** The REST status, headers and body of an error (docs/errors.md). */
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
