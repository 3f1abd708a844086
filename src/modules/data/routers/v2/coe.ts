import { publicProcedure, router } from "../../../../trpc/init.js";
import { V2CoeQuery, V2CoeResult } from "../../schemas/coe.js";
import { v2PageQuery } from "../../schemas/params.js";
import { v2List, v2ListOf } from "../../schemas.js";
import { coeService } from "../../services/coe.js";
import { versionedRoute } from "../meta.js";

const meta = versionedRoute(2, "coe");

export const v2CoeRouter = router({
  list: publicProcedure
    .meta(meta("/coe", "COE bidding results, newest month first, paged"))
    .input(V2CoeQuery)
    .output(v2ListOf(V2CoeResult, "V2CoeResultList"))
    .query(async ({ ctx, input: { page, limit, ...filters } }) =>
      v2List(await coeService.list(ctx.db, filters, { page, limit }), { page, limit }),
    ),

  latest: publicProcedure
    .meta(meta("/coe/latest", "The latest bidding round's results, paged"))
    .input(v2PageQuery)
    .output(v2ListOf(V2CoeResult, "V2LatestCoeResultList"))
    .query(async ({ ctx, input }) => v2List(await coeService.latest(ctx.db, input), input)),
});
