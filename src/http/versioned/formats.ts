import { type AppError, errorCatalogue, type FieldIssue } from "../../errors.js";
import type { ErrorResponse } from "../error-responses.js";
import type { ApiVersion } from "./endpoints.js";

// The versioned groups' own error formats (docs/api/data.md). Status, headers and
// v1's code come from the error catalogue; only the body is worded per version.

const v1Error = (status: number, code: string, message: string, details: FieldIssue[], headers = {}) => ({
  status,
  headers,
  body: { error: { code, message, details } },
});

/** `month parameter required; page must be at least 1`: each issue after its parameter's name. */
const sentence = (issues: FieldIssue[]) => issues.map(({ field, message }) => `${field} ${message}`).join("; ");

export function versionedError(error: AppError, version: ApiVersion): ErrorResponse {
  const { status, v1 } = errorCatalogue[error.kind];
  const headers = error.headers ?? {};
  const issues = error.details?.issues ?? [];
  const message = issues.length > 0 ? sentence(issues) : error.message;
  if (version === 2) return { status, headers, body: { error: message } };
  return v1Error(status, v1, message, issues, headers);
}

/** An `X-API-Version` the service does not serve: always in v1's format (docs/api/data.md). */
export const unsupportedVersionResponse = (value: string): ErrorResponse =>
  v1Error(400, "UNSUPPORTED_VERSION", `API version ${JSON.stringify(value)} is not supported: use 1 or 2`, [
    { field: "X-API-Version", message: "must be 1 or 2" },
  ]);
