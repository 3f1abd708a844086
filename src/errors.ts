/**
 * The one error type services throw. `http/error-response.ts` maps it to the
 * contract's status and body; the tRPC layer maps it to a tRPC error code.
 */
export type AppErrorKind =
  | "validation_error"
  | "not_found"
  | "conflict"
  | "unauthenticated"
  | "forbidden"
  | "unsupported_media_type"
  | "rate_limited"
  | "unavailable";

export interface FieldIssue {
  field: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly kind: AppErrorKind,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers, e.g. Retry-After or WWW-Authenticate. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);

export const validationError = (issues: FieldIssue[]) =>
  new AppError("validation_error", issues.map((i) => `${i.field}: ${i.message}`).join("; "), { issues });
