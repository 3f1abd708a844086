import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import type { AgentOut } from "../../src/modules/agents/schemas.js";
import type { TaskOut } from "../../src/modules/tasks/schemas.js";
import type { TestApp } from "./app.js";

// Lists and the lease pick order by created_at, in milliseconds, and then by id: two rows created within
// the same millisecond come in an order their random ids decide. Each create is therefore sent only once
// the clock has passed the millisecond in which the last create was answered (the service stamped that row
// no later), so rows made one after another are ordered as they were made.
let lastAnsweredAt = 0;
async function afterLastCreate(): Promise<void> {
  while (Date.now() <= lastAnsweredAt) await sleep(1);
}
async function created(res: Response): Promise<unknown> {
  lastAnsweredAt = Date.now();
  expect(res.status).toBe(201);
  return res.json();
}

export async function createAgent(
  app: TestApp,
  body: { name?: string; type?: string; metadata?: Record<string, string> } = {},
): Promise<AgentOut> {
  await afterLastCreate();
  const res = await app.request("/agents", { method: "POST", json: { name: "agent", type: "worker", ...body } });
  return (await created(res)) as AgentOut;
}

export async function createTask(app: TestApp, agentId: string, body: Record<string, unknown> = {}): Promise<TaskOut> {
  await afterLastCreate();
  const res = await app.request(`/agents/${agentId}/tasks`, { method: "POST", json: { title: "task", ...body } });
  return (await created(res)) as TaskOut;
}
