import { z } from "zod";
import { filter, month, pageParams } from "./params.js";

const vehicleClass = filter("COE category (A to D: E has no PQP)", "Category A").optional();

export const V1PqpQuery = z.object({ month: month.optional(), vehicle_class: vehicleClass });
export const V2PqpQuery = z.object({ month: month.optional(), vehicleClass, ...pageParams });

export const V1QuotaPremium = z
  .object({ month: z.string(), vehicle_class: z.string(), pqp: z.int() })
  .meta({ id: "V1QuotaPremium", example: { month: "2021-03", vehicle_class: "Category A", pqp: 41397 } });

export const V2QuotaPremium = z
  .object({ month: z.string(), vehicleClass: z.string(), pqp: z.int() })
  .meta({ id: "V2QuotaPremium", example: { month: "2021-03", vehicleClass: "Category A", pqp: 41397 } });
