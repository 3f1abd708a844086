import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent } from "./helpers/factories.js";

// A run now racing the deletion of its agent (docs/api/schedules.md): both
// lock the agent and the schedule, and must take them in one order, or
// PostgreSQL answers one of them with a deadlock (a 500). Either the run
// comes first and its task is deleted with the agent, or the deletion does
// and the run is 404; no task outlives its agent.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const rounds = 40;

describe("run now against the agent's deletion", () => {
  it(`${rounds} rounds of three run nows and a DELETE at once: only 201/404 and 204, and no task left`, async () => {
    const statuses: Record<string, number> = {};
    const count = (what: string, status: number) => {
      statuses[`${what} ${status}`] = (statuses[`${what} ${status}`] ?? 0) + 1;
    };
    for (let round = 0; round < rounds; round++) {
      const agent = await createAgent(app);
      const created = await app.request(`/agents/${agent.id}/schedules`, {
        method: "POST",
        json: { every_seconds: 3600, task: { title: "race" } },
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const run = () => app.request(`/agents/${agent.id}/schedules/${id}/runs`, { method: "POST" });
      const answers = await Promise.all([
        run(),
        app.request(`/agents/${agent.id}`, { method: "DELETE" }),
        run(),
        run(),
      ]);
      for (const [i, answer] of answers.entries()) count(i === 1 ? "DELETE" : "run", answer.status);
      expect(Object.keys(statuses).filter((key) => !["run 201", "run 404", "DELETE 204"].includes(key))).toEqual([]);
      expect(await app.database.db.prisma.task.count({ where: { agentId: agent.id } })).toBe(0);
    }
    expect(statuses["DELETE 204"]).toBe(rounds);
  }, 120_000);
});
