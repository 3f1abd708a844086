import { publicProcedure, router } from "../../../../trpc/init.js";
import { V1PqpQuery, V1QuotaPremium } from "../../schemas/pqp.js";
import { v1List, v1ListOf } from "../../schemas.js";
import { pqpService } from "../../services/pqp.js";
import { versionedRoute } from "../meta.js";

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
