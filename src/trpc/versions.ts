import type { VersionCondition } from "../resources/conditional-writes.js";
import type { Context } from "./context.js";

/**
 * The versions a write accepts (docs/http.md): the tRPC input's
 * `expected_version`, or what REST read from `If-Match` into the context.
 */
export const acceptedVersions = (ctx: Context, expectedVersion: number | undefined): VersionCondition =>
  expectedVersion === undefined ? ctx.ifMatch : [expectedVersion];
