import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRouter } from "../src/modules/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { testProvider } from "./helpers/databases.js";

// A database that lost its tables: every query fails in the database, for real.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  // The tables that refer to tasks and agents first (PostgreSQL refuses otherwise); the schedules
  // stay, with their reference to agents dropped (CASCADE drops the constraint, not the table).
  const cascade = testProvider === "postgresql" ? " CASCADE" : "";
  for (const table of ["task_metadata", "agent_metadata", "tasks", "agents"]) {
    await app.database.db.prisma.$executeRawUnsafe(`DROP TABLE ${table}${cascade}`);
  }
});
afterAll(() => app.close());

const leaks = /prisma|sql|table|agents\b|stack|at \w+ \(|node_modules|invalid|Error:/i;

describe("an unexpected failure", () => {
  it("is a 500 with exactly the contract's body over REST", async () => {
    for (const [path, init] of [
      ["/agents", {}],
      ["/agents/00000000-0000-4000-8000-000000000000", {}],
      ["/agents", { method: "POST", json: { name: "a", type: "worker" } }],
    ] as const) {
      const res = await app.request(path, init);
      expect(res.status).toBe(500);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: "internal_error", message: "An unexpected error occurred" });
      expect(text).not.toMatch(leaks);
    }
  });

  it("leaks nothing over tRPC either", async () => {
    const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc` })] });
    const error = await client.agents.list.query({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    const { message, data } = error as TRPCClientError<AppRouter>;
    expect(message).toBe("An unexpected error occurred");
    // The same kind as the REST body (docs/clients.md), and nothing else.
    expect(data).toEqual({
      code: "INTERNAL_SERVER_ERROR",
      httpStatus: 500,
      path: "agents.list",
      error: "internal_error",
    });
  });

  it("is logged server-side with its cause and the request id, and the server keeps serving", async () => {
    const res = await app.request("/agents", { headers: { "x-request-id": "boom-1" } });
    expect(res.status).toBe(500);
    await expect
      .poll(() => app.logs.find((l) => l.request_id === "boom-1" && l.level === "error"))
      .toMatchObject({ msg: "unexpected error", err: expect.objectContaining({ stack: expect.any(String) }) });
    expect((await app.request("/openapi.json")).status).toBe(200);
  });
});
