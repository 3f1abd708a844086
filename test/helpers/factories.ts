import { expect } from "vitest";
import type { AgentOut } from "../../src/modules/agents/schemas.js";
import type { TaskOut } from "../../src/modules/tasks/schemas.js";
import type { TestApp } from "./app.js";

export async function createAgent(
  app: TestApp,
  body: { name?: string; type?: string; metadata?: Record<string, string> } = {},
): Promise<AgentOut> {
  const res = await app.request("/agents", { method: "POST", json: { name: "agent", type: "worker", ...body } });
  expect(res.status).toBe(201);
  return (await res.json()) as AgentOut;
}

export async function createTask(app: TestApp, agentId: string, body: Record<string, unknown> = {}): Promise<TaskOut> {
  const res = await app.request(`/agents/${agentId}/tasks`, { method: "POST", json: { title: "task", ...body } });
  expect(res.status).toBe(201);
  return (await res.json()) as TaskOut;
}
