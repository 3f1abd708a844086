// The agents and tasks the fuzzer's ids point at: made before it starts, and
// learnt from every successful answer while it runs.
import type { FuzzRequest, Ref } from "./request.js";

/** The agents and tasks that exist (as far as the fuzzer saw them created). */
export class IdPool {
  readonly agents: string[] = [];
  readonly tasks: { id: string; agentId: string }[] = [];
  private readonly seen = new Set<string>();

  resolve(ref: Ref): string {
    const task = this.tasks[ref.pick % Math.max(1, this.tasks.length)];
    if (ref.kind === "task") return task?.id ?? crypto.randomUUID();
    if (ref.kind === "taskAgent") return task?.agentId ?? crypto.randomUUID();
    return this.agents[ref.pick % Math.max(1, this.agents.length)] ?? crypto.randomUUID();
  }

  /** Learns agents and tasks from a successful response (REST body or tRPC result data). */
  learn(value: unknown) {
    if (Array.isArray(value)) {
      for (const item of value) this.learn(item);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    const { id, agent_id: agentId, title, type } = value as Record<string, unknown>;
    if (typeof id !== "string" || this.seen.has(id)) return;
    if (typeof agentId === "string" && typeof title === "string") {
      this.seen.add(id);
      this.tasks.push({ id, agentId });
    } else if (typeof type === "string" && "status" in value) {
      this.seen.add(id);
      this.agents.push(id);
    }
  }
}

/** Agents and tasks for the requests' ids to find, made over HTTP before the fuzzing starts. */
export async function seedPool(url: string, pool: IdPool) {
  for (let a = 0; a < 10; a++) {
    const agent = await fetch(`${url}/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: `fuzz-${a}`, type: "worker" }),
    });
    const { id } = (await agent.json()) as { id: string };
    pool.learn({ id, type: "worker", status: "idle" });
    for (let t = 0; t < 3; t++) {
      const task = await fetch(`${url}/agents/${id}/tasks`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: `task-${t}` }),
      });
      pool.learn(await task.json());
    }
  }
}

/** What a successful response created or showed: REST bodies, tRPC results (single or batched). */
export function learnFrom(request: FuzzRequest, body: string, pool: IdPool) {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return;
  }
  if (request.expect.kind !== "trpc") return pool.learn(value);
  for (const item of Array.isArray(value) ? value : [value])
    pool.learn((item as { result?: { data?: unknown } })?.result?.data);
}
