import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { testProvider } from "./helpers/databases.js";

// One line per request at info; a client's error adds nothing; an unexpected
// error adds one line with its stack, and the same error repeating is sampled.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const linesOf = (requestIds: readonly string[]) =>
  app.logs.filter((line) => requestIds.includes(String(line.request_id)));

describe("request logs", () => {
  it("a client error is one line at info, without a stack", async () => {
    const ids = ["client-404", "client-400", "client-405"] as const;
    await app.request("/agents/00000000-0000-4000-8000-000000000000", { headers: { "x-request-id": ids[0] } });
    await app.request("/agents", { method: "POST", json: { name: "" }, headers: { "x-request-id": ids[1] } });
    await app.request("/trpc/agents.create", { headers: { "x-request-id": ids[2] } });
    await expect.poll(() => linesOf(ids).length).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = linesOf(ids);
    expect(lines.map((line) => [line.level, line.msg, line.status])).toEqual([
      ["info", "request", 404],
      ["info", "request", 400],
      ["info", "request", 405],
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/stack|\\n\s+at /);
  });

  it("the same unexpected error repeated 30 times is logged in full at most 5 times", async () => {
    // A database that lost a table: every list fails in the database, for real, the same way.
    await app.database.db.prisma.$executeRawUnsafe("DROP TABLE agent_metadata");
    await app.database.db.prisma.$executeRawUnsafe("DROP TABLE task_metadata");
    await app.database.db.prisma.$executeRawUnsafe("DROP TABLE tasks");
    // The schedules' reference to agents goes with it on PostgreSQL (CASCADE drops the constraint only).
    await app.database.db.prisma.$executeRawUnsafe(
      `DROP TABLE agents${testProvider === "postgresql" ? " CASCADE" : ""}`,
    );
    const ids = Array.from({ length: 30 }, (_, i) => `boom-${i}`);
    for (const id of ids) {
      const res = await app.request("/agents", { headers: { "x-request-id": id } });
      expect(res.status).toBe(500);
      await res.arrayBuffer();
    }
    await expect.poll(() => linesOf(ids).filter((line) => line.msg === "request").length).toBe(30);
    const errors = linesOf(ids).filter((line) => line.level === "error");
    expect(errors.length).toBe(5);
    for (const line of errors) {
      expect(line).toMatchObject({
        msg: "unexpected error",
        err: expect.objectContaining({ stack: expect.any(String) }),
      });
    }
  });
});
