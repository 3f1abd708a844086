import type { FieldIssue } from "../errors.js";
import { type ErrorResponse, errorResponse } from "../http/error-response.js";

// The versioned groups' own error formats (SPEC §8.2). Status and headers come
// from the one mapping in error-response.ts; only the body is worded per version.

const v1Codes: Record<number, string> = {
  400: "VALIDATION_ERROR",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  413: "PAYLOAD_TOO_LARGE",
  429: "RATE_LIMITED",
  503: "SERVICE_UNAVAILABLE",
};

const v1Error = (status: number, code: string, message: string, details: FieldIssue[], headers = {}) => ({
  status,
  headers,
  body: { error: { code, message, details } },
});

/** `month parameter required; page must be at least 1`: each issue after its parameter's name. */
const sentence = (issues: FieldIssue[]) => issues.map(({ field, message }) => `${field} ${message}`).join("; ");

export function versionedErrorResponse(error: unknown, version: 1 | 2): ErrorResponse {
  const { status, headers, body } = errorResponse(error);
  const issues = ((body.details as { issues?: FieldIssue[] } | undefined)?.issues ?? []) as FieldIssue[];
  const message = issues.length > 0 ? sentence(issues) : String(body.message ?? body.detail);
  if (version === 2) return { status, headers, body: { error: message } };
  return v1Error(status, v1Codes[status] ?? "INTERNAL_ERROR", message, issues, headers);
}

/** An `X-API-Version` the service does not serve: always in v1's format (SPEC §8.1). */
export const unsupportedVersionResponse = (value: string): ErrorResponse =>
  v1Error(400, "UNSUPPORTED_VERSION", `API version ${JSON.stringify(value)} is not supported: use 1 or 2`, [
    { field: "X-API-Version", message: "must be 1 or 2" },
  ]);
