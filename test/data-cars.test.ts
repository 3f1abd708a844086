import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { get } from "./helpers/data.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({}, { sampleData: true });
});
afterAll(() => app.close());

type V1Car = { month: string; make: string; fuel_type: string; vehicle_type: string; number: number };
const byKey = (a: V1Car, b: V1Car) =>
  a.month.localeCompare(b.month) ||
  a.make.localeCompare(b.make) ||
  a.fuel_type.localeCompare(b.fuel_type) ||
  a.vehicle_type.localeCompare(b.vehicle_type);

describe("the published facts (data/sample/sg/README.md)", () => {
  it("2021-01 totals 5,284 cars, led by TOYOTA, MERCEDES BENZ, HONDA and BMW", async () => {
    const { res, body } = await get(app, "/v1/cars?month=2021-01");
    expect(res.status).toBe(200);
    const byMake = new Map<string, number>();
    for (const row of body.data as V1Car[]) byMake.set(row.make, (byMake.get(row.make) ?? 0) + row.number);
    expect([...byMake.values()].reduce((a, b) => a + b, 0)).toBe(5284);
    const top = [...byMake].sort((a, b) => b[1] - a[1]).slice(0, 4);
    expect(top).toEqual([
      ["TOYOTA", 1012],
      ["MERCEDES BENZ", 805],
      ["HONDA", 704],
      ["BMW", 647],
    ]);
  });

  it("cleans makes and vehicle types: BMW, not B.M.W.; Coupe/Convertible", async () => {
    const makes = (await get(app, "/v1/cars/makes")).body.data as string[];
    expect(makes).toContain("BMW");
    expect(makes).toContain("MCLAREN");
    expect(makes.filter((make) => make.includes(".") || make !== make.toUpperCase())).toEqual([]);
    expect((await get(app, "/v1/cars?make=B.M.W.")).body).toEqual({ success: true, data: [], count: 0 });
    const bmw = (await get(app, "/v1/cars?month=2021-01&make=BMW&fuel_type=Petrol")).body.data as V1Car[];
    expect(bmw.map((row) => [row.vehicle_type, row.number])).toEqual([
      ["Coupe/Convertible", 17],
      ["Hatchback", 219],
      ["Multi-purpose Vehicle/Station-wagon", 0],
      ["Sedan", 128],
      ["Sports Utility Vehicle", 182],
    ]);
  });
});

describe("GET /v1/cars", () => {
  it("without a month returns the whole latest month, ordered by make, fuel type, vehicle type", async () => {
    const { res, body } = await get(app, "/v1/cars");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("x-api-version")).toBe("1");
    expect(body.success).toBe(true);
    expect(body.count).toBe(335);
    expect(body.data).toHaveLength(335);
    expect(new Set(body.data.map((row: V1Car) => row.month))).toEqual(new Set(["2021-01"]));
    expect(body.data).toEqual([...body.data].sort(byKey));
    expect(body.data[0]).toEqual({
      month: "2021-01",
      make: "ALFA ROMEO",
      fuel_type: "Petrol",
      vehicle_type: "Coupe/Convertible",
      number: 0,
    });
  });

  it("filters by snake_case parameters and ignores v2's names", async () => {
    const { body } = await get(app, "/v1/cars?month=2021-01&fuel_type=Diesel");
    expect(body.count).toBe(40);
    expect(body.data.every((row: V1Car) => row.fuel_type === "Diesel")).toBe(true);
    expect((await get(app, "/v1/cars?month=2021-01&fuelType=Diesel")).body.count).toBe(335);
    const sedans = (await get(app, "/v1/cars?make=BMW&vehicle_type=Sedan&month=2020-06")).body;
    expect(sedans.data.map((row: V1Car) => row.vehicle_type)).toEqual(["Sedan", "Sedan", "Sedan"]);
  });

  it("gives an empty result for unknown values and 400 for malformed ones", async () => {
    expect((await get(app, "/v1/cars?make=NO%20SUCH%20MAKE")).body).toEqual({ success: true, data: [], count: 0 });
    expect((await get(app, "/v1/cars?month=1999-01")).body).toEqual({ success: true, data: [], count: 0 });
    const { res, body } = await get(app, "/v1/cars?month=2021-13");
    expect(res.status).toBe(400);
    expect(body).toEqual({
      error: {
        code: "VALIDATION_ERROR",
        message: "month must be a month in YYYY-MM format",
        details: [{ field: "month", message: "must be a month in YYYY-MM format" }],
      },
    });
    expect((await get(app, "/v1/cars?make=")).body.error.details).toEqual([
      { field: "make", message: "must have at least 1 character" },
    ]);
  });
});

describe("GET /v2/cars", () => {
  it("pages every month with camelCase fields, 10 rows by default", async () => {
    const { res, body } = await get(app, "/v2/cars");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-api-version")).toBe("2");
    expect(body.meta).toEqual({ total: 21270, page: 1, pageSize: 10 });
    expect(body.data).toHaveLength(10);
    expect(body.data[0]).toEqual({
      month: "2016-01",
      make: "ALFA ROMEO",
      fuelType: "Petrol",
      vehicleType: "Coupe/Convertible",
      number: 0,
    });
  });

  it("filters by camelCase parameters", async () => {
    const { body } = await get(app, "/v2/cars?month=2021-01&make=BMW&fuelType=Petrol&vehicleType=Sedan");
    expect(body).toEqual({
      data: [{ month: "2021-01", make: "BMW", fuelType: "Petrol", vehicleType: "Sedan", number: 128 }],
      meta: { total: 1, page: 1, pageSize: 10 },
    });
    expect((await get(app, "/v2/cars?make=BMW&fuel_type=Petrol")).body.meta.total).toBe(890);
  });

  it("keeps the order across pages, and the true total past the last page", async () => {
    const first = (await get(app, "/v2/cars?month=2021-01&limit=100")).body;
    expect(first.meta).toEqual({ total: 335, page: 1, pageSize: 100 });
    expect(first.data).toHaveLength(100);
    const last = (await get(app, "/v2/cars?month=2021-01&limit=100&page=4")).body;
    expect(last.data).toHaveLength(35);
    const whole = (await get(app, "/v1/cars?month=2021-01")).body.data as V1Car[];
    expect(last.data.at(-1)).toEqual({
      month: "2021-01",
      make: whole.at(-1)?.make,
      fuelType: whole.at(-1)?.fuel_type,
      vehicleType: whole.at(-1)?.vehicle_type,
      number: whole.at(-1)?.number,
    });
    expect((await get(app, "/v2/cars?month=2021-01&limit=100&page=5")).body).toEqual({
      data: [],
      meta: { total: 335, page: 5, pageSize: 100 },
    });
    expect((await get(app, "/v2/cars?page=999999999999")).body.meta).toEqual({
      total: 21270,
      page: 999999999999,
      pageSize: 10,
    });
  });

  it.each([
    ["limit=101", "limit must be at most 100"],
    ["limit=0", "limit must be at least 1"],
    ["page=0", "page must be at least 1"],
    ["page=1.5", "page must be a whole number"],
    ["page=two", "page must be a whole number"],
    ["month=2021-1", "month must be a month in YYYY-MM format"],
    ["month=2021-01&month=2021-02", "month must be a single value"],
  ])("answers ?%s with 400 in v2's format", async (query, message) => {
    const { res, body } = await get(app, `/v2/cars?${query}`);
    expect(res.status).toBe(400);
    expect(body).toEqual({ error: message });
  });

  it("gives an empty page for unknown values", async () => {
    expect((await get(app, "/v2/cars?vehicleType=Tractor")).body).toEqual({
      data: [],
      meta: { total: 0, page: 1, pageSize: 10 },
    });
  });
});

describe("makes and months", () => {
  it("lists distinct makes alphabetically", async () => {
    const v1 = (await get(app, "/v1/cars/makes")).body;
    expect(v1.count).toBe(67);
    expect(v1.data).toEqual([...v1.data].sort());
    expect(v1.data.slice(0, 3)).toEqual(["ALFA ROMEO", "ALPINA", "ALPINE"]);
    const v2 = (await get(app, "/v2/cars/makes?limit=3&page=3")).body;
    expect(v2).toEqual({ data: v1.data.slice(6, 9), meta: { total: 67, page: 3, pageSize: 3 } });
  });

  it("lists months newest first", async () => {
    const v1 = (await get(app, "/v1/cars/months")).body;
    expect(v1.count).toBe(61);
    expect(v1.data[0]).toBe("2021-01");
    expect(v1.data.at(-1)).toBe("2016-01");
    expect((await get(app, "/v2/cars/months?page=7")).body).toEqual({
      data: ["2016-01"],
      meta: { total: 61, page: 7, pageSize: 10 },
    });
    expect((await get(app, "/v2/cars/months?page=8")).body).toEqual({
      data: [],
      meta: { total: 61, page: 8, pageSize: 10 },
    });
  });
});

describe("GET /cars/compare", () => {
  it("v1 compares the latest month by default", async () => {
    const { res, body } = await get(app, "/v1/cars/compare");
    expect(res.status).toBe(200);
    expect(body).toEqual({
      success: true,
      data: {
        month: "2021-01",
        total: 5284,
        previous_month: { month: "2020-12", total: 3936 },
        previous_year: { month: "2020-01", total: 5029 },
      },
    });
  });

  it("v2 requires the month and names comparisons in camelCase; a month without data is null", async () => {
    const { body } = await get(app, "/v2/cars/compare?month=2016-12");
    expect(body.data.previousYear).toBeNull();
    expect(body.data.previousMonth.month).toBe("2016-11");
    expect(body).toEqual({
      data: { month: "2016-12", total: body.data.total, previousMonth: body.data.previousMonth, previousYear: null },
    });
    const missing = await get(app, "/v2/cars/compare");
    expect(missing.res.status).toBe(400);
    expect(missing.body).toEqual({ error: "month parameter required" });
  });

  it("a month before the data has a zero total and no comparisons", async () => {
    expect((await get(app, "/v1/cars/compare?month=2010-01")).body).toEqual({
      success: true,
      data: { month: "2010-01", total: 0, previous_month: null, previous_year: null },
    });
  });
});
