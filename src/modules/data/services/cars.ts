import type { Database } from "../../../db/index.js";
import { notFound } from "../../../errors.js";
import { type Page, type Paging, paged, pageOf } from "../service.js";
import { shiftMonth } from "./months.js";

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
