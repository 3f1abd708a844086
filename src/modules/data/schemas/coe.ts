import { z } from "zod";
import { filter, month, pageParams } from "./params.js";

const vehicleClass = filter("COE category", "Category A").optional();
const range = {
  start: month.optional().meta({ description: "First month of an inclusive range", example: "2025-01" }),
  end: month.optional().meta({ description: "Last month of an inclusive range", example: "2025-06" }),
};

export const V1CoeQuery = z.object({ month: month.optional(), ...range, vehicle_class: vehicleClass });
export const V2CoeQuery = z.object({ month: month.optional(), ...range, vehicleClass, ...pageParams });

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
