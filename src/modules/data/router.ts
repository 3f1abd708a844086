import type { OpenApiMeta } from "trpc-to-openapi";
import { z } from "zod";
import { type ProcedureMeta, publicProcedure, router } from "../../trpc/procedures.js";
import {
  V1CarComparison,
  V1CarRegistration,
  V1CarsQuery,
  V1CoeQuery,
  V1CoeResult,
  V1CompareQuery,
  V1PqpQuery,
  V1QuotaPremium,
  V2CarComparison,
  V2CarRegistration,
  V2CarsQuery,
  V2CoeQuery,
  V2CoeResult,
  V2CompareQuery,
  V2PqpQuery,
  V2QuotaPremium,
  v1List,
  v1ListOf,
  v1Single,
  v1SingleOf,
  v2List,
  v2ListOf,
  v2PageQuery,
  v2Single,
  v2SingleOf,
} from "./schemas.js";
import {
  type CarComparison,
  type CarRegistration,
  type CoeResult,
  carsService,
  coeService,
  pqpService,
} from "./service.js";

/**
 * The meta of a versioned GET route: `/v{version}{path}`, tagged by version
 * and group; `errorResponses` lists statuses beyond 400 and 500.
 */
export const versionedRoute =
  (version: 1 | 2, group: string) =>
  (path: `/${string}`, summary: string, errorResponses: number[] = []): OpenApiMeta<ProcedureMeta> => ({
    openapi: {
      method: "GET",
      path: `/v${version}${path}`,
      tags: [`v${version} ${group}`],
      summary,
      protect: false,
      errorResponses,
    },
    apiVersion: version,
  });

const v1Cars = versionedRoute(1, "cars");
const v1Coe = versionedRoute(1, "coe");
const v2Cars = versionedRoute(2, "cars");
const v2Coe = versionedRoute(2, "coe");

const carToV1 = (row: CarRegistration) => ({
  month: row.month,
  make: row.make,
  fuel_type: row.fuelType,
  vehicle_type: row.vehicleType,
  number: row.number,
});

const comparisonToV1 = ({ previousMonth, previousYear, ...rest }: CarComparison) => ({
  ...rest,
  previous_month: previousMonth,
  previous_year: previousYear,
});

export const v1CarsRouter = router({
  list: publicProcedure
    .meta(v1Cars("/cars", "New car registrations by make (the latest month unless month is given)"))
    .input(V1CarsQuery)
    .output(v1ListOf(V1CarRegistration, "V1CarRegistrationList"))
    .query(async ({ ctx, input }) => {
      const filters = { make: input.make, fuelType: input.fuel_type, vehicleType: input.vehicle_type };
      const { rows } = await carsService.list(ctx.db, { ...filters, month: input.month, latestMonthByDefault: true });
      return v1List(rows.map(carToV1));
    }),

  makes: publicProcedure
    .meta(v1Cars("/cars/makes", "Distinct makes, alphabetical"))
    .input(z.object({}))
    .output(v1ListOf(z.string(), "V1MakeList", "BMW"))
    .query(async ({ ctx }) => v1List((await carsService.makes(ctx.db)).rows)),

  months: publicProcedure
    .meta(v1Cars("/cars/months", "Months with registrations, newest first"))
    .input(z.object({}))
    .output(v1ListOf(z.string(), "V1MonthList", "2021-01"))
    .query(async ({ ctx }) => v1List((await carsService.months(ctx.db)).rows)),

  compare: publicProcedure
    .meta(v1Cars("/cars/compare", "A month's registrations against the month before and a year before", [404]))
    .input(V1CompareQuery)
    .output(v1SingleOf(V1CarComparison, "V1CarComparisonResult"))
    .query(async ({ ctx, input }) => v1Single(comparisonToV1(await carsService.compare(ctx.db, input.month)))),
});

const coeToV1 = (row: CoeResult) => ({
  month: row.month,
  bidding_no: row.biddingNo,
  vehicle_class: row.vehicleClass,
  quota: row.quota,
  bids_success: row.bidsSuccess,
  bids_received: row.bidsReceived,
  premium: row.premium,
});

export const v1CoeRouter = router({
  list: publicProcedure
    .meta(v1Coe("/coe", "COE bidding results, newest month first"))
    .input(V1CoeQuery)
    .output(v1ListOf(V1CoeResult, "V1CoeResultList"))
    .query(async ({ ctx, input: { vehicle_class, ...filters } }) =>
      v1List((await coeService.list(ctx.db, { ...filters, vehicleClass: vehicle_class })).rows.map(coeToV1)),
    ),

  latest: publicProcedure
    .meta(v1Coe("/coe/latest", "The latest bidding round's results"))
    .input(z.object({}))
    .output(v1ListOf(V1CoeResult, "V1LatestCoeResultList"))
    .query(async ({ ctx }) => v1List((await coeService.latest(ctx.db)).rows.map(coeToV1))),
});

export const v1PqpRouter = router({
  list: publicProcedure
    .meta(versionedRoute(1, "pqp")("/pqp", "Prevailing Quota Premiums, newest month first"))
    .input(V1PqpQuery)
    .output(v1ListOf(V1QuotaPremium, "V1QuotaPremiumList"))
    .query(async ({ ctx, input }) => {
      const { rows } = await pqpService.list(ctx.db, { month: input.month, vehicleClass: input.vehicle_class });
      return v1List(rows.map(({ vehicleClass, ...row }) => ({ ...row, vehicle_class: vehicleClass })));
    }),
});

export const v2CarsRouter = router({
  list: publicProcedure
    .meta(v2Cars("/cars", "New car registrations by make, paged"))
    .input(V2CarsQuery)
    .output(v2ListOf(V2CarRegistration, "V2CarRegistrationList"))
    .query(async ({ ctx, input: { page, limit, ...filters } }) =>
      v2List(await carsService.list(ctx.db, filters, { page, limit }), { page, limit }),
    ),

  makes: publicProcedure
    .meta(v2Cars("/cars/makes", "Distinct makes, alphabetical, paged"))
    .input(v2PageQuery)
    .output(v2ListOf(z.string(), "V2MakeList", "BMW"))
    .query(async ({ ctx, input }) => v2List(await carsService.makes(ctx.db, input), input)),

  months: publicProcedure
    .meta(v2Cars("/cars/months", "Months with registrations, newest first, paged"))
    .input(v2PageQuery)
    .output(v2ListOf(z.string(), "V2MonthList", "2021-01"))
    .query(async ({ ctx, input }) => v2List(await carsService.months(ctx.db, input), input)),

  compare: publicProcedure
    .meta(v2Cars("/cars/compare", "A month's registrations against the month before and a year before"))
    .input(V2CompareQuery)
    .output(v2SingleOf(V2CarComparison, "V2CarComparisonResult"))
    .query(async ({ ctx, input }) => v2Single(await carsService.compare(ctx.db, input.month))),
});

export const v2CoeRouter = router({
  list: publicProcedure
    .meta(v2Coe("/coe", "COE bidding results, newest month first, paged"))
    .input(V2CoeQuery)
    .output(v2ListOf(V2CoeResult, "V2CoeResultList"))
    .query(async ({ ctx, input: { page, limit, ...filters } }) =>
      v2List(await coeService.list(ctx.db, filters, { page, limit }), { page, limit }),
    ),

  latest: publicProcedure
    .meta(v2Coe("/coe/latest", "The latest bidding round's results, paged"))
    .input(v2PageQuery)
    .output(v2ListOf(V2CoeResult, "V2LatestCoeResultList"))
    .query(async ({ ctx, input }) => v2List(await coeService.latest(ctx.db, input), input)),
});

export const v2PqpRouter = router({
  list: publicProcedure
    .meta(versionedRoute(2, "pqp")("/pqp", "Prevailing Quota Premiums, newest month first, paged"))
    .input(V2PqpQuery)
    .output(v2ListOf(V2QuotaPremium, "V2QuotaPremiumList"))
    .query(async ({ ctx, input: { page, limit, ...filters } }) =>
      v2List(await pqpService.list(ctx.db, filters, { page, limit }), { page, limit }),
    ),
});

/**
 * The versioned data groups, one procedure per versioned REST
 * operation: `data.v1.cars.list` is GET /v1/cars. Both versions call the same
 * services; a version only names fields and shapes the envelope.
 */
export const dataRouter = router({
  v1: router({ cars: v1CarsRouter, coe: v1CoeRouter, pqp: v1PqpRouter }),
  v2: router({ cars: v2CarsRouter, coe: v2CoeRouter, pqp: v2PqpRouter }),
});
