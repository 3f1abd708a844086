import { z } from "zod";
import { publicProcedure, router } from "../../../../trpc/init.js";
import { V2CarComparison, V2CarRegistration, V2CarsQuery, V2CompareQuery } from "../../schemas/cars.js";
import { v2PageQuery } from "../../schemas/params.js";
import { v2List, v2ListOf, v2Single, v2SingleOf } from "../../schemas.js";
import { carsService } from "../../services/cars.js";
import { versionedRoute } from "../meta.js";

const meta = versionedRoute(2, "cars");

export const v2CarsRouter = router({
  list: publicProcedure
    .meta(meta("/cars", "New car registrations by make, paged"))
    .input(V2CarsQuery)
    .output(v2ListOf(V2CarRegistration, "V2CarRegistrationList"))
    .query(async ({ ctx, input: { page, limit, ...filters } }) =>
      v2List(await carsService.list(ctx.db, filters, { page, limit }), { page, limit }),
    ),

  makes: publicProcedure
    .meta(meta("/cars/makes", "Distinct makes, alphabetical, paged"))
    .input(v2PageQuery)
    .output(v2ListOf(z.string(), "V2MakeList", "BMW"))
    .query(async ({ ctx, input }) => v2List(await carsService.makes(ctx.db, input), input)),

  months: publicProcedure
    .meta(meta("/cars/months", "Months with registrations, newest first, paged"))
    .input(v2PageQuery)
    .output(v2ListOf(z.string(), "V2MonthList", "2021-01"))
    .query(async ({ ctx, input }) => v2List(await carsService.months(ctx.db, input), input)),

  compare: publicProcedure
    .meta(meta("/cars/compare", "A month's registrations against the month before and a year before"))
    .input(V2CompareQuery)
    .output(v2SingleOf(V2CarComparison, "V2CarComparisonResult"))
    .query(async ({ ctx, input }) => v2Single(await carsService.compare(ctx.db, input.month))),
});
