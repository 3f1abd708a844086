import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRouter } from "../src/modules/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { get } from "./helpers/data.js";

// One schema serves both transports and stays strict on both: REST turns a
// query's decimal digits into an integer and nothing else into one; /trpc
// takes JSON numbers only. Nothing done for REST may loosen /trpc.
let app: TestApp;
let client: ReturnType<typeof createTRPCClient<AppRouter>>;
beforeAll(async () => {
  app = await startTestApp({}, { sampleData: true });
  client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc` })] });
});
afterAll(() => app.close());

const wholeNumber = (field: string) => ({
  error: "validation_error",
  message: `Request validation failed: ${field}: must be a whole number`,
  details: { issues: [{ field, message: "must be a whole number" }] },
});

describe("integers over REST", () => {
  it.each(["0x3", "1e0", "", " 3", "3 ", "+3", "3.0", "٣", "0b11", "Infinity", "NaN", "3abc"])(
    "?limit=%j is a 400 naming limit",
    async (value) => {
      const { res, body } = await get(app, `/agents?limit=${encodeURIComponent(value)}`);
      expect(res.status).toBe(400);
      expect(body).toEqual(wholeNumber("limit"));
    },
  );

  it("decimal digits are the integer they spell, leading zeros and all", async () => {
    for (const value of ["3", "003", "1000"]) {
      expect((await app.request(`/agents?limit=${value}`)).status, value).toBe(200);
    }
    const { body } = await get(app, "/agents?skip=-1");
    expect(body.details.issues).toEqual([{ field: "skip", message: "Too small: expected number to be >=0" }]);
  });

  it("a number past the safe integers is refused, never rounded", async () => {
    const { res, body } = await get(app, "/agents?skip=99999999999999999999");
    expect(res.status).toBe(400);
    expect(body.details.issues.map((issue: { field: string }) => issue.field)).toEqual(["skip"]);
  });

  it("reports a bad integer together with the other parameters' problems", async () => {
    const { body } = await get(app, "/agents?limit=1e0&status=sleeping&skip=0x1");
    expect(body.details.issues.map((issue: { field: string }) => issue.field)).toEqual(["skip", "limit", "status"]);
  });

  it.each(["0x2", "1e0", "", "2.0"])("the data groups refuse ?page=%j in their version's format", async (value) => {
    const v2 = await get(app, `/v2/cars/makes?page=${value}`);
    expect(v2.res.status).toBe(400);
    expect(v2.body).toEqual({ error: "page must be a whole number" });
    const root = await get(app, `/cars/makes?page=${value}`, { "X-API-Version": "2" });
    expect(root.body).toEqual({ error: "page must be a whole number" });
  });
});

describe("integers over /trpc", () => {
  // Sent as written: the client's types would refuse them, a JavaScript caller might not.
  const listWith = (limit: unknown) =>
    client.agents.list.query({ limit } as { limit: number }).catch((error: unknown) => error);

  it.each([["5"], [[3]], [true], [3.5], [null], ["0x3"]])("limit %j is a 400", async (limit) => {
    // A REST call with the same parameter first: it must not loosen the shared schema.
    expect((await app.request("/agents?limit=5")).status).toBe(200);
    const error = await listWith(limit);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<AppRouter>).data).toMatchObject({
      code: "BAD_REQUEST",
      httpStatus: 400,
      error: "validation_error",
      details: { issues: [{ field: "limit", message: expect.any(String) }] },
    });
  });

  it("a JSON integer is taken", async () => {
    expect(Array.isArray((await client.agents.list.query({ limit: 5 })).items)).toBe(true);
  });

  it("the data groups' integers are strict too", async () => {
    expect((await app.request("/v2/cars/makes?page=2&limit=3")).status).toBe(200);
    const error = await client.data.v2.cars.makes
      .query({ page: "2" } as unknown as { page: number })
      .catch((e: unknown) => e);
    expect((error as TRPCClientError<AppRouter>).data).toMatchObject({ httpStatus: 400, error: "validation_error" });
    expect(await client.data.v2.cars.makes.query({ page: 1, limit: 2 })).toMatchObject({
      meta: { page: 1, pageSize: 2 },
    });
  });
});
