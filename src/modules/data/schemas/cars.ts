import { z } from "zod";
import { filter, month, pageParams } from "./params.js";

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
