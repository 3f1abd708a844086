import { z } from "zod";
import { text } from "../../resources/schemas.js";
import type { Page, Paging } from "./service.js";

// The two versions' response envelopes (docs/api/data.md), as schemas for the
// documents and as builders for the procedures.

// The documented example of an envelope is built from its item's example.
const exampleOf = (item: z.ZodType): unknown => item.meta()?.example;

export const v1ListOf = <T extends z.ZodType>(item: T, id: string, itemExample = exampleOf(item)) =>
  z
    .object({ success: z.literal(true), data: z.array(item), count: z.int().meta({ description: "data.length" }) })
    .meta({ id, example: { success: true, data: [itemExample], count: 1 } });

export const v1SingleOf = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ success: z.literal(true), data: item }).meta({ id, example: { success: true, data: exampleOf(item) } });

export const v2ListOf = <T extends z.ZodType>(item: T, id: string, itemExample = exampleOf(item)) =>
  z
    .object({
      data: z.array(item),
      meta: z.object({
        total: z.int().meta({ description: "All matches, whatever the page" }),
        page: z.int(),
        pageSize: z.int().meta({ description: "The limit in force" }),
      }),
    })
    .meta({ id, example: { data: [itemExample], meta: { total: 1, page: 1, pageSize: 10 } } });

export const v2SingleOf = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ data: item }).meta({ id, example: { data: exampleOf(item) } });

export const v1List = <T>(data: T[]) => ({ success: true as const, data, count: data.length });

export const v1Single = <T>(data: T) => ({ success: true as const, data });

export const v2List = <T>({ rows, total }: Page<T>, { page, limit }: Paging) => ({
  data: rows,
  meta: { total, page, pageSize: limit },
});

export const v2Single = <T>(data: T) => ({ data });

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

/** v2 paging (docs/api/data.md). */
export const pageParams = {
  page: wholeNumber(1, Number.MAX_SAFE_INTEGER, 1, "Page number, from 1"),
  limit: wholeNumber(1, 100, 10, "Rows per page, 1–100"),
};

export const v2PageQuery = z.object(pageParams);

const make = filter("Make, as cleaned by the importer (BMW, not B.M.W.)", "TOYOTA").optional();
const fuelType = filter("Fuel type", "Petrol").optional();
const vehicleType = filter("Vehicle type", "Sedan").optional();

export const V1CarsQuery = z.object({ month: month.optional(), make, fuel_type: fuelType, vehicle_type: vehicleType });
export const V2CarsQuery = z.object({ month: month.optional(), make, fuelType, vehicleType, ...pageParams });
export const V1CompareQuery = z.object({ month: month.optional() });
export const V2CompareQuery = z.object({ month });

export const V1CarRegistration = z
  .object({ month: z.string(), make: z.string(), fuel_type: z.string(), vehicle_type: z.string(), number: z.int() })
  .meta({
    id: "V1CarRegistration",
    example: { month: "2021-01", make: "BMW", fuel_type: "Petrol", vehicle_type: "Sedan", number: 128 },
  });

export const V2CarRegistration = z
  .object({ month: z.string(), make: z.string(), fuelType: z.string(), vehicleType: z.string(), number: z.int() })
  .meta({
    id: "V2CarRegistration",
    example: { month: "2021-01", make: "BMW", fuelType: "Petrol", vehicleType: "Sedan", number: 128 },
  });

const MonthTotal = z.object({ month: z.string(), total: z.int() }).meta({ id: "MonthTotal" });

export const V1CarComparison = z
  .object({
    month: z.string(),
    total: z.int(),
    previous_month: MonthTotal.nullable(),
    previous_year: MonthTotal.nullable(),
  })
  .meta({
    id: "V1CarComparison",
    example: {
      month: "2021-01",
      total: 5284,
      previous_month: { month: "2020-12", total: 4917 },
      previous_year: { month: "2020-01", total: 6093 },
    },
  });

export const V2CarComparison = z
  .object({
    month: z.string(),
    total: z.int(),
    previousMonth: MonthTotal.nullable(),
    previousYear: MonthTotal.nullable(),
  })
  .meta({
    id: "V2CarComparison",
    example: {
      month: "2021-01",
      total: 5284,
      previousMonth: { month: "2020-12", total: 4917 },
      previousYear: { month: "2020-01", total: 6093 },
    },
  });

const coeClass = filter("COE category", "Category A").optional();
const range = {
  start: month.optional().meta({ description: "First month of an inclusive range", example: "2025-01" }),
  end: month.optional().meta({ description: "Last month of an inclusive range", example: "2025-06" }),
};

export const V1CoeQuery = z.object({ month: month.optional(), ...range, vehicle_class: coeClass });
export const V2CoeQuery = z.object({ month: month.optional(), ...range, vehicleClass: coeClass, ...pageParams });

export const V1CoeResult = z
  .object({
    month: z.string(),
    bidding_no: z.int(),
    vehicle_class: z.string(),
    quota: z.int(),
    bids_success: z.int(),
    bids_received: z.int(),
    premium: z.int(),
  })
  .meta({
    id: "V1CoeResult",
    example: {
      month: "2025-06",
      bidding_no: 1,
      vehicle_class: "Category A",
      quota: 1275,
      bids_success: 1274,
      bids_received: 1691,
      premium: 96999,
    },
  });

export const V2CoeResult = z
  .object({
    month: z.string(),
    biddingNo: z.int(),
    vehicleClass: z.string(),
    quota: z.int(),
    bidsSuccess: z.int(),
    bidsReceived: z.int(),
    premium: z.int(),
  })
  .meta({
    id: "V2CoeResult",
    example: {
      month: "2025-06",
      biddingNo: 1,
      vehicleClass: "Category A",
      quota: 1275,
      bidsSuccess: 1274,
      bidsReceived: 1691,
      premium: 96999,
    },
  });

const pqpClass = filter("COE category (A to D: E has no PQP)", "Category A").optional();

export const V1PqpQuery = z.object({ month: month.optional(), vehicle_class: pqpClass });
export const V2PqpQuery = z.object({ month: month.optional(), vehicleClass: pqpClass, ...pageParams });

export const V1QuotaPremium = z
  .object({ month: z.string(), vehicle_class: z.string(), pqp: z.int() })
  .meta({ id: "V1QuotaPremium", example: { month: "2021-03", vehicle_class: "Category A", pqp: 41397 } });

export const V2QuotaPremium = z
  .object({ month: z.string(), vehicleClass: z.string(), pqp: z.int() })
  .meta({ id: "V2QuotaPremium", example: { month: "2021-03", vehicleClass: "Category A", pqp: 41397 } });
