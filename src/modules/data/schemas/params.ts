import { z } from "zod";
import { text } from "../../../resources/schemas.js";

// Query parameters of the versioned data routes. Messages read after the
// parameter's name ("month parameter required", "page must be at least 1"):
// v1 lists them as details, v2 joins them into its one error string.

const presence = {
  error: (issue: { input: unknown }) => (issue.input === undefined ? "parameter required" : "must be a single value"),
};

export const monthPattern = /^\d{4}-(0[1-9]|1[0-2])$/;

export const month = z
  .string(presence)
  .regex(monthPattern, "must be a month in YYYY-MM format")
  .meta({ description: "A month, YYYY-MM", example: "2021-01" });

/** A filter value: any text matches exactly, and an unknown one matches nothing. */
export const filter = (description: string, example: string) => text(1, 100).meta({ description, example });

// An integer, strictly: the REST dispatcher turns a query's decimal digits
// into one (http/rest/coerce.ts), and /trpc takes JSON numbers only.
const wholeNumber = (min: number, max: number, fallback: number, description: string) =>
  z
    .int({ error: "must be a whole number" })
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`)
    .default(fallback)
    .meta({ description });

/** v2 paging (SPEC §8.2). */
export const pageParams = {
  page: wholeNumber(1, Number.MAX_SAFE_INTEGER, 1, "Page number, from 1"),
  limit: wholeNumber(1, 100, 10, "Rows per page, 1–100"),
};

export const v2PageQuery = z.object(pageParams);
