import { publicProcedure, router } from "../../../../trpc/init.js";
import { V2PqpQuery, V2QuotaPremium } from "../../schemas/pqp.js";
import { v2List, v2ListOf } from "../../schemas.js";
import { pqpService } from "../../services/pqp.js";
import { versionedRoute } from "../meta.js";

export const v2PqpRouter = router({
  list: publicProcedure
    .meta(versionedRoute(2, "pqp")("/pqp", "Prevailing Quota Premiums, newest month first, paged"))
    .input(V2PqpQuery)
    .output(v2ListOf(V2QuotaPremium, "V2QuotaPremiumList"))
    .query(async ({ ctx, input: { page, limit, ...filters } }) =>
      v2List(await pqpService.list(ctx.db, filters, { page, limit }), { page, limit }),
    ),
});
