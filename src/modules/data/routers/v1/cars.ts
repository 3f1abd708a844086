import { z } from "zod";
import { publicProcedure, router } from "../../../../trpc/init.js";
import { V1CarComparison, V1CarRegistration, V1CarsQuery, V1CompareQuery } from "../../schemas/cars.js";
import { v1List, v1ListOf, v1Single, v1SingleOf } from "../../schemas.js";
import { type CarComparison, type CarRegistration, carsService } from "../../services/cars.js";
import { versionedRoute } from "../meta.js";

const meta = versionedRoute(1, "cars");

const toV1 = (row: CarRegistration) => ({
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
    .meta(meta("/cars", "New car registrations by make (the latest month unless month is given)"))
    .input(V1CarsQuery)
    .output(v1ListOf(V1CarRegistration, "V1CarRegistrationList"))
    .query(async ({ ctx, input }) => {
      const filters = { make: input.make, fuelType: input.fuel_type, vehicleType: input.vehicle_type };
      const { rows } = await carsService.list(ctx.db, { ...filters, month: input.month, latestMonthByDefault: true });
      return v1List(rows.map(toV1));
    }),

  makes: publicProcedure
    .meta(meta("/cars/makes", "Distinct makes, alphabetical"))
    .input(z.object({}))
    .output(v1ListOf(z.string(), "V1MakeList", "BMW"))
    .query(async ({ ctx }) => v1List((await carsService.makes(ctx.db)).rows)),

  months: publicProcedure
    .meta(meta("/cars/months", "Months with registrations, newest first"))
    .input(z.object({}))
    .output(v1ListOf(z.string(), "V1MonthList", "2021-01"))
    .query(async ({ ctx }) => v1List((await carsService.months(ctx.db)).rows)),

  compare: publicProcedure
    .meta(meta("/cars/compare", "A month's registrations against the month before and a year before", [404]))
    .input(V1CompareQuery)
    .output(v1SingleOf(V1CarComparison, "V1CarComparisonResult"))
    .query(async ({ ctx, input }) => v1Single(comparisonToV1(await carsService.compare(ctx.db, input.month)))),
});
