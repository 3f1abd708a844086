import { z } from "zod";

/**
 * The version a write expects to change (docs/http.md), over tRPC; REST says
 * it with `If-Match`, and the REST document leaves this field out.
 */
export const expectedVersion = {
  expected_version: z
    .int()
    .min(1)
    .optional()
    .meta({ description: "Write only if the resource is at this version, else PRECONDITION_FAILED", example: 1 }),
};
