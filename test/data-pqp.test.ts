import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { get } from "./helpers/data.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({}, { sampleData: true });
});
afterAll(() => app.close());

describe("GET /v1/pqp", () => {
  it("returns every premium, month newest first, then class", async () => {
    const { res, body } = await get(app, "/v1/pqp");
    expect(res.status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.count).toBe(536);
    expect(body.data.slice(0, 5)).toEqual([
      { month: "2021-03", vehicle_class: "Category A", pqp: 41397 },
      { month: "2021-03", vehicle_class: "Category B", pqp: 47701 },
      { month: "2021-03", vehicle_class: "Category C", pqp: 38480 },
      { month: "2021-03", vehicle_class: "Category D", pqp: 7576 },
      { month: "2021-02", vehicle_class: "Category A", pqp: expect.any(Number) },
    ]);
  });

  it("filters by month and class; Category E has none", async () => {
    expect((await get(app, "/v1/pqp?month=2020-05&vehicle_class=Category%20B")).body).toEqual({
      success: true,
      data: [{ month: "2020-05", vehicle_class: "Category B", pqp: 33568 }],
      count: 1,
    });
    expect((await get(app, "/v1/pqp?vehicle_class=Category%20E")).body).toEqual({ success: true, data: [], count: 0 });
    expect((await get(app, "/v1/pqp?vehicle_class=Category%20A")).body.count).toBe(134);
  });

  it("refuses a malformed month in v1's format", async () => {
    const { res, body } = await get(app, "/v1/pqp?month=May%202020");
    expect(res.status).toBe(400);
    expect(body.error.code).toBe("VALIDATION_ERROR");
    expect(body.error.details).toEqual([{ field: "month", message: "must be a month in YYYY-MM format" }]);
  });
});

describe("GET /v2/pqp", () => {
  it("pages camelCase premiums", async () => {
    expect((await get(app, "/v2/pqp?vehicleClass=Category%20D&limit=2")).body).toEqual({
      data: [
        { month: "2021-03", vehicleClass: "Category D", pqp: 7576 },
        { month: "2021-02", vehicleClass: "Category D", pqp: expect.any(Number) },
      ],
      meta: { total: 134, page: 1, pageSize: 2 },
    });
    expect((await get(app, "/v2/pqp?limit=100&page=6")).body.data).toHaveLength(36);
    expect((await get(app, "/v2/pqp?limit=100&page=7")).body).toEqual({
      data: [],
      meta: { total: 536, page: 7, pageSize: 100 },
    });
  });

  it("answers errors in v2's format", async () => {
    const { res, body } = await get(app, "/v2/pqp?month=2020-00&page=-1");
    expect(res.status).toBe(400);
    expect(body).toEqual({ error: "month must be a month in YYYY-MM format; page must be at least 1" });
  });
});
