import type { Database } from "../../db/index.js";
import { notFound, validationError } from "../../errors.js";

/** A page request of a v2 list (docs/api/data.md): `page` from 1, `limit` rows per page. */
export interface Paging {
  page: number;
  limit: number;
}

/** Rows of one page with the number of all matches; without paging, every match. */
export interface Page<T> {
  rows: T[];
  total: number;
}

export const offsetOf = ({ page, limit }: Paging) => (page - 1) * limit;

/**
 * Counts first, then reads only a page that exists: a page far past the end
 * costs one count and still reports the true total.
 */
export async function paged<T>(
  count: () => Promise<number>,
  find: (window: { skip?: number; take?: number }) => Promise<T[]>,
  paging: Paging | undefined,
): Promise<Page<T>> {
  if (!paging) {
    const rows = await find({});
    return { rows, total: rows.length };
  }
  const total = await count();
  const skip = offsetOf(paging);
  return { rows: skip < total ? await find({ skip, take: paging.limit }) : [], total };
}

/** Paging of a short list already in memory (makes, months). */
export function pageOf<T>(items: T[], paging: Paging | undefined): Page<T> {
  if (!paging) return { rows: items, total: items.length };
  const skip = offsetOf(paging);
  return { rows: items.slice(skip, skip + paging.limit), total: items.length };
}

/** `shiftMonth("2021-01", -1)` → `"2020-12"`; months are "YYYY-MM". */
export function shiftMonth(month: string, by: number): string {
  const [year, monthOfYear] = month.split("-").map(Number) as [number, number];
  const index = year * 12 + (monthOfYear - 1) + by;
  return `${String(Math.floor(index / 12)).padStart(4, "0")}-${String((index % 12) + 1).padStart(2, "0")}`;
}

export interface CarRegistration {
  month: string;
  make: string;
  fuelType: string;
  vehicleType: string;
  number: number;
}

export interface CarFilters {
  month?: string;
  make?: string;
  fuelType?: string;
  vehicleType?: string;
  /** Without a month, only the latest month (v1's rule). */
  latestMonthByDefault?: boolean;
}

export interface MonthTotal {
  month: string;
  total: number;
}

export interface CarComparison extends MonthTotal {
  previousMonth: MonthTotal | null;
  previousYear: MonthTotal | null;
}

const carSelect = { month: true, make: true, fuelType: true, vehicleType: true, number: true } as const;

async function latestMonth(db: Database): Promise<string | undefined> {
  const row = await db.prisma.carRegistration.findFirst({ orderBy: { month: "desc" }, select: { month: true } });
  return row?.month;
}

export const carsService = {
  /** Registrations ordered by month, make, fuel type, vehicle type. */
  async list(db: Database, filters: CarFilters, paging?: Paging): Promise<Page<CarRegistration>> {
    const month = filters.month ?? (filters.latestMonthByDefault ? await latestMonth(db) : undefined);
    if (filters.latestMonthByDefault && month === undefined) return { rows: [], total: 0 };
    const where = { month, make: filters.make, fuelType: filters.fuelType, vehicleType: filters.vehicleType };
    return paged(
      () => db.prisma.carRegistration.count({ where }),
      (window) =>
        db.prisma.carRegistration.findMany({
          where,
          orderBy: [{ month: "asc" }, { make: "asc" }, { fuelType: "asc" }, { vehicleType: "asc" }],
          select: carSelect,
          ...window,
        }),
      paging,
    );
  },

  /** Distinct makes, alphabetical. */
  async makes(db: Database, paging?: Paging): Promise<Page<string>> {
    const groups = await db.prisma.carRegistration.groupBy({ by: ["make"], orderBy: { make: "asc" } });
    return pageOf(
      groups.map((group) => group.make),
      paging,
    );
  },

  /** Distinct months, newest first. */
  async months(db: Database, paging?: Paging): Promise<Page<string>> {
    const groups = await db.prisma.carRegistration.groupBy({ by: ["month"], orderBy: { month: "desc" } });
    return pageOf(
      groups.map((group) => group.month),
      paging,
    );
  },

  /**
   * A month's total against the month before and the same month a year
   * before; a comparison month without data is null. No month: the latest.
   */
  async compare(db: Database, requested?: string): Promise<CarComparison> {
    const month = requested ?? (await latestMonth(db));
    if (month === undefined) throw notFound("Car registration data");
    const previousMonth = shiftMonth(month, -1);
    const previousYear = shiftMonth(month, -12);
    const sums = await db.prisma.carRegistration.groupBy({
      by: ["month"],
      where: { month: { in: [month, previousMonth, previousYear] } },
      _sum: { number: true },
    });
    const totalOf = (wanted: string) => {
      const group = sums.find((sum) => sum.month === wanted);
      return group ? { month: wanted, total: group._sum.number ?? 0 } : null;
    };
    return {
      month,
      total: totalOf(month)?.total ?? 0,
      previousMonth: totalOf(previousMonth),
      previousYear: totalOf(previousYear),
    };
  },
};

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
