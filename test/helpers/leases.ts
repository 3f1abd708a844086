import { expect } from "vitest";
import type { AgentOut } from "../../src/modules/agents/schemas.js";
import type { LeaseOut } from "../../src/modules/leases/schemas.js";
import type { TaskOut } from "../../src/modules/tasks/schemas.js";
import type { TestApp } from "./app.js";
import { createAgent } from "./factories.js";

export const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
  /** The raw body: "" for a 204. */
  text: string;
}

/** A request and its whole answer; the body parsed when there is one. */
export async function send<T = unknown>(
  app: TestApp,
  method: string,
  path: string,
  json?: unknown,
): Promise<Answer<T>> {
  const res = await app.request(path, { method, json });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text === "" ? undefined : JSON.parse(text)) as T, text };
}

/** A new agent, moved to `running`: the only state that gets work. */
export async function runningAgent(app: TestApp): Promise<AgentOut> {
  const agent = await createAgent(app);
  const res = await app.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "running" } });
  expect(res.status).toBe(200);
  return (await res.json()) as AgentOut;
}

export const leasePath = (agentId: string, leaseId?: string) =>
  leaseId === undefined ? `/agents/${agentId}/leases` : `/agents/${agentId}/leases/${leaseId}`;
export const taskPath = (task: Pick<TaskOut, "agent_id" | "id">) => `/agents/${task.agent_id}/tasks/${task.id}`;

/** POST …/leases: the lease, which must be granted (201). */
export async function takeLease(app: TestApp, agentId: string, body: Record<string, unknown> = {}): Promise<LeaseOut> {
  const answer = await send<LeaseOut>(app, "POST", leasePath(agentId), body);
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

export const getTask = async (app: TestApp, task: Pick<TaskOut, "agent_id" | "id">) =>
  (await send<TaskOut>(app, "GET", taskPath(task))).body;

/**
 * The agent's events recorded from now on, data parsed. Read from the table
 * directly: what was recorded, whatever the readers' horizon (other test
 * files' transactions on the same PostgreSQL server can hold it back).
 */
export async function eventLog(app: TestApp, agentId: string) {
  const { prisma } = app.database.db;
  const last = await prisma.event.findFirst({ where: { agentId }, orderBy: { id: "desc" }, select: { id: true } });
  const mark = last?.id ?? 0n;
  return async () =>
    (await prisma.event.findMany({ where: { agentId, id: { gt: mark } }, orderBy: { id: "asc" } })).map((event) => ({
      type: event.type,
      occurred_at: event.occurredAt.toISOString(),
      task_id: event.taskId,
      data: JSON.parse(event.data) as Record<string, unknown>,
    }));
}

/** Waits for `check` to hold (polling the API), up to `timeoutMs`; returns its last value. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
