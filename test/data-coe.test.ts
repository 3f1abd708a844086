import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importDirectory } from "../src/modules/data/importer/importer.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { csvDir, get } from "./helpers/data.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({}, { sampleData: true });
});
afterAll(() => app.close());

type V1Coe = { month: string; bidding_no: number; vehicle_class: string; premium: number };

describe("GET /v1/coe", () => {
  it("returns 2025-06 round 1's published premiums, quoted thousands parsed", async () => {
    const { res, body } = await get(app, "/v1/coe?month=2025-06");
    expect(res.status).toBe(200);
    const round1 = (body.data as V1Coe[]).filter((row) => row.bidding_no === 1);
    expect(round1.map((row) => [row.vehicle_class, row.premium])).toEqual([
      ["Category A", 96999],
      ["Category B", 113000],
      ["Category C", 62000],
      ["Category D", 9000],
      ["Category E", 113900],
    ]);
    expect(round1[0]).toEqual({
      month: "2025-06",
      bidding_no: 1,
      vehicle_class: "Category A",
      quota: 1275,
      bids_success: 1274,
      bids_received: 1691,
      premium: 96999,
    });
    expect(body.count).toBe(10);
  });

  it("returns every result, month newest first, then round, then class", async () => {
    const { body } = await get(app, "/v1/coe");
    expect(body.count).toBe(1925);
    const keys = (body.data as V1Coe[]).map((row) => [row.month, row.bidding_no, row.vehicle_class]);
    const sorted = [...keys].sort(
      (a, b) =>
        String(b[0]).localeCompare(String(a[0])) ||
        Number(a[1]) - Number(b[1]) ||
        String(a[2]).localeCompare(String(b[2])),
    );
    expect(keys).toEqual(sorted);
    expect(keys[0]).toEqual(["2026-04", 1, "Category A"]);
  });

  it("filters by an inclusive month range and a class", async () => {
    const { body } = await get(app, "/v1/coe?start=2025-01&end=2025-06&vehicle_class=Category%20E");
    expect(body.count).toBe(12);
    expect(new Set(body.data.map((row: V1Coe) => row.month))).toEqual(
      new Set(["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"]),
    );
    expect((await get(app, "/v1/coe?start=2025-01&end=2025-06")).body.count).toBe(60);
    expect((await get(app, "/v1/coe?month=2020-05")).body).toEqual({ success: true, data: [], count: 0 });
    expect((await get(app, "/v1/coe?vehicle_class=Category%20F")).body.count).toBe(0);
  });

  it("refuses a range whose end is before its start, and malformed months", async () => {
    const backwards = await get(app, "/v1/coe?start=2025-06&end=2025-01");
    expect(backwards.res.status).toBe(400);
    expect(backwards.body).toEqual({
      error: {
        code: "VALIDATION_ERROR",
        message: "end must not be before start",
        details: [{ field: "end", message: "must not be before start" }],
      },
    });
    const malformed = await get(app, "/v1/coe?start=2025&end=June");
    expect(malformed.res.status).toBe(400);
    expect(malformed.body.error.details).toEqual([
      { field: "start", message: "must be a month in YYYY-MM format" },
      { field: "end", message: "must be a month in YYYY-MM format" },
    ]);
  });
});

describe("GET /v2/coe", () => {
  it("pages camelCase results; past the last page keeps the total", async () => {
    const { body } = await get(app, "/v2/coe?month=2025-06&vehicleClass=Category%20A");
    expect(body).toEqual({
      data: [
        {
          month: "2025-06",
          biddingNo: 1,
          vehicleClass: "Category A",
          quota: 1275,
          bidsSuccess: 1274,
          bidsReceived: 1691,
          premium: 96999,
        },
        expect.objectContaining({ month: "2025-06", biddingNo: 2, vehicleClass: "Category A" }),
      ],
      meta: { total: 2, page: 1, pageSize: 10 },
    });
    expect((await get(app, "/v2/coe?limit=100&page=20")).body.data).toHaveLength(25);
    expect((await get(app, "/v2/coe?limit=100&page=21")).body).toEqual({
      data: [],
      meta: { total: 1925, page: 21, pageSize: 100 },
    });
    expect((await get(app, "/v2/coe?vehicle_class=Category%20A")).body.meta.total).toBe(1925);
  });

  it("answers errors in v2's format", async () => {
    expect((await get(app, "/v2/coe?start=2025-06&end=2025-01")).body).toEqual({
      error: "end must not be before start",
    });
    expect((await get(app, "/v2/coe?limit=101")).body).toEqual({ error: "limit must be at most 100" });
  });
});

describe("GET /coe/latest", () => {
  it("returns the latest month's last round", async () => {
    const v1 = (await get(app, "/v1/coe/latest")).body;
    expect(v1.count).toBe(5);
    expect(v1.data.map((row: V1Coe) => [row.month, row.bidding_no, row.vehicle_class, row.premium])).toEqual([
      ["2026-04", 1, "Category A", 118000],
      ["2026-04", 1, "Category B", 121000],
      ["2026-04", 1, "Category C", 80001],
      ["2026-04", 1, "Category D", 10000],
      ["2026-04", 1, "Category E", 121001],
    ]);
    const v2 = (await get(app, "/v2/coe/latest?limit=2&page=3")).body;
    expect(v2).toEqual({
      data: [expect.objectContaining({ month: "2026-04", biddingNo: 1, vehicleClass: "Category E" })],
      meta: { total: 5, page: 3, pageSize: 2 },
    });
  });

  it("moves to the second round once it is published", async () => {
    const header = "month,bidding_no,vehicle_class,quota,bids_success,bids_received,premium\n";
    const rows = ["1", "2"].map((round) => `2026-05,${round},Category A,1200,1190,"2,001",12000${round}\n`).join("");
    await importDirectory(app.database.db, csvDir({ "coe.csv": header + rows }));
    const { body } = await get(app, "/v2/coe/latest");
    expect(body).toEqual({
      data: [
        {
          month: "2026-05",
          biddingNo: 2,
          vehicleClass: "Category A",
          quota: 1200,
          bidsSuccess: 1190,
          bidsReceived: 2001,
          premium: 120002,
        },
      ],
      meta: { total: 1, page: 1, pageSize: 10 },
    });
  });
});
