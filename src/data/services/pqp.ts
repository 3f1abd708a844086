import type { Db } from "../../db.js";
import { type Page, type Paging, paged } from "./paging.js";

export interface QuotaPremium {
  month: string;
  vehicleClass: string;
  pqp: number;
}

export interface PqpFilters {
  month?: string;
  vehicleClass?: string;
}

export const pqpService = {
  /** Prevailing Quota Premiums, month newest first, then class. */
  async list(db: Db, { month, vehicleClass }: PqpFilters, paging?: Paging): Promise<Page<QuotaPremium>> {
    const where = { month, vehicleClass };
    return paged(
      () => db.quotaPremium.count({ where }),
      (window) =>
        db.quotaPremium.findMany({
          where,
          orderBy: [{ month: "desc" }, { vehicleClass: "asc" }],
          select: { month: true, vehicleClass: true, pqp: true },
          ...window,
        }),
      paging,
    );
  },
};
