import type { Database } from "../../../db/index.js";
import { validationError } from "../../../errors.js";
import { type Page, type Paging, paged } from "../service.js";

export interface CoeResult {
  month: string;
  biddingNo: number;
  vehicleClass: string;
  quota: number;
  bidsSuccess: number;
  bidsReceived: number;
  premium: number;
}

export interface CoeFilters {
  month?: string;
  /** Inclusive month range. */
  start?: string;
  end?: string;
  vehicleClass?: string;
}

const coeSelect = {
  month: true,
  biddingNo: true,
  vehicleClass: true,
  quota: true,
  bidsSuccess: true,
  bidsReceived: true,
  premium: true,
} as const;

const coeOrder = [{ month: "desc" }, { biddingNo: "asc" }, { vehicleClass: "asc" }] as const;

export const coeService = {
  /** Bidding results, month newest first, then bidding round, then class. */
  async list(db: Database, { month, start, end, vehicleClass }: CoeFilters, paging?: Paging): Promise<Page<CoeResult>> {
    // Only a field name is known here; the version layer words it in its own format.
    if (start && end && start > end) throw validationError([{ field: "end", message: "must not be before start" }]);
    const where = {
      vehicleClass,
      AND: [{ month }, { month: { gte: start } }, { month: { lte: end } }],
    };
    return paged(
      () => db.prisma.coeResult.count({ where }),
      (window) => db.prisma.coeResult.findMany({ where, orderBy: [...coeOrder], select: coeSelect, ...window }),
      paging,
    );
  },

  /** The rows of the latest month's last bidding round. */
  async latest(db: Database, paging?: Paging): Promise<Page<CoeResult>> {
    const last = await db.prisma.coeResult.findFirst({
      orderBy: [{ month: "desc" }, { biddingNo: "desc" }],
      select: { month: true, biddingNo: true },
    });
    if (!last) return { rows: [], total: 0 };
    const where = { month: last.month, biddingNo: last.biddingNo };
    return paged(
      () => db.prisma.coeResult.count({ where }),
      (window) => db.prisma.coeResult.findMany({ where, orderBy: [...coeOrder], select: coeSelect, ...window }),
      paging,
    );
  },
};
