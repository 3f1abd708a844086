import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { AppErrorKind } from "../errors.js";

const codes: Record<AppErrorKind, TRPC_ERROR_CODE_KEY> = {
  validation_error: "BAD_REQUEST",
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  unauthenticated: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  unsupported_media_type: "UNSUPPORTED_MEDIA_TYPE",
  rate_limited: "TOO_MANY_REQUESTS",
  unavailable: "SERVICE_UNAVAILABLE",
};

export const trpcCodeFor = (kind: AppErrorKind) => codes[kind];
