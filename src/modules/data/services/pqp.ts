import type { Database } from "../../../db/index.js";
import { type Page, type Paging, paged } from "../service.js";

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
  async list(db: Database, { month, vehicleClass }: PqpFilters, paging?: Paging): Promise<Page<QuotaPremium>> {
    const where = { month, vehicleClass };
    return paged(
      () => db.prisma.quotaPremium.count({ where }),
      (window) =>
        db.prisma.quotaPremium.findMany({
          where,
          orderBy: [{ month: "desc" }, { vehicleClass: "asc" }],
          select: { month: true, vehicleClass: true, pqp: true },
          ...window,
        }),
      paging,
    );
  },
};
