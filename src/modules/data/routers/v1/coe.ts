import { z } from "zod";
import { publicProcedure, router } from "../../../../trpc/init.js";
import { V1CoeQuery, V1CoeResult } from "../../schemas/coe.js";
import { v1List, v1ListOf } from "../../schemas.js";
import { type CoeResult, coeService } from "../../services/coe.js";
import { versionedRoute } from "../meta.js";

const meta = versionedRoute(1, "coe");

const toV1 = (row: CoeResult) => ({
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
    .meta(meta("/coe", "COE bidding results, newest month first"))
    .input(V1CoeQuery)
    .output(v1ListOf(V1CoeResult, "V1CoeResultList"))
    .query(async ({ ctx, input: { vehicle_class, ...filters } }) =>
      v1List((await coeService.list(ctx.db, { ...filters, vehicleClass: vehicle_class })).rows.map(toV1)),
    ),

  latest: publicProcedure
    .meta(meta("/coe/latest", "The latest bidding round's results"))
    .input(z.object({}))
    .output(v1ListOf(V1CoeResult, "V1LatestCoeResultList"))
    .query(async ({ ctx }) => v1List((await coeService.latest(ctx.db)).rows.map(toV1))),
});
