import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LeaseOut } from "../src/modules/leases/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTask } from "./helpers/factories.js";
import { type Answer, getTask, leasePath, runningAgent, send, takeLease } from "./helpers/leases.js";

// docs/api/leases.md: long polls, and many workers at once.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** A lease request, with the time its answer arrived. */
async function timedLease(agentId: string, body: Record<string, unknown>) {
  const answer = await send<LeaseOut>(app, "POST", leasePath(agentId), body);
  return { ...answer, at: Date.now() };
}

/**
 * Lets a long poll reach its wait (the request has to arrive and find
 * nothing first), and checks it is still waiting.
 */
async function waiting(request: Promise<unknown>) {
  let done = false;
  void request.then(() => {
    done = true;
  });
  await sleep(300);
  expect(done, "the request waits").toBe(false);
}

describe("a long poll", () => {
  it("is answered at once when a task is created", async () => {
    const agent = await runningAgent(app);
    const polling = timedLease(agent.id, { wait_seconds: 20 });
    await waiting(polling);
    const task = await createTask(app, agent.id);
    const created = Date.now();
    const answer = await polling;
    expect(answer.status).toBe(201);
    expect(answer.body.task_id).toBe(task.id);
    expect(answer.at - created).toBeLessThan(200);
  });

  it("is answered when another worker releases its task", async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id);
    const held = await takeLease(app, agent.id);
    const polling = timedLease(agent.id, { wait_seconds: 20 });
    await waiting(polling);
    expect((await send(app, "DELETE", leasePath(agent.id, held.id))).status).toBe(204);
    const released = Date.now();
    const answer = await polling;
    expect(answer.status).toBe(201);
    expect(answer.body.task_id).toBe(task.id);
    expect(answer.at - released).toBeLessThan(200);
  });

  it("is answered when a task's run_at comes, not before", async () => {
    const agent = await runningAgent(app);
    const runAt = new Date(Date.now() + 1_000).toISOString();
    const task = await createTask(app, agent.id, { run_at: runAt });
    const answer = await timedLease(agent.id, { wait_seconds: 20 });
    expect(answer.status).toBe(201);
    expect(answer.body.task_id).toBe(task.id);
    expect(answer.body.created_at >= runAt).toBe(true);
    expect(answer.at - Date.parse(runAt)).toBeLessThan(200);
  });

  it("is 204 when nothing became ready within wait_seconds", async () => {
    const agent = await runningAgent(app);
    // Not ready within the wait: it comes due later.
    await createTask(app, agent.id, { run_at: new Date(Date.now() + 60_000).toISOString() });
    const started = Date.now();
    const answer = await timedLease(agent.id, { wait_seconds: 1 });
    expect(answer.status).toBe(204);
    expect(answer.text).toBe("");
    expect(answer.at - started).toBeGreaterThanOrEqual(1_000);
    expect(answer.at - started).toBeLessThan(1_000 + 500);
  });

  it("is 409 when the agent stops running and a task then comes", async () => {
    const agent = await runningAgent(app);
    const polling = timedLease(agent.id, { wait_seconds: 20 });
    await waiting(polling);
    expect((await send(app, "PATCH", `/agents/${agent.id}`, { status: "paused" })).status).toBe(200);
    const task = await createTask(app, agent.id);
    const answer = await polling;
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ details: { agent_status: "paused" } });
    expect((await getTask(app, task)).status).toBe("pending");
  });

  it("whose client left leases nothing to nobody", async () => {
    const agent = await runningAgent(app);
    const leaving = new AbortController();
    const polling = fetch(`${app.baseUrl}${leasePath(agent.id)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wait_seconds: 20 }),
      signal: leaving.signal,
    }).catch((error: Error) => error.name);
    await waiting(polling);
    leaving.abort();
    expect(await polling).toBe("AbortError");
    // The server notices the closed connection at once; give it a moment, as a real client's disconnect would.
    await sleep(200);
    const task = await createTask(app, agent.id);
    await sleep(500);
    expect(await getTask(app, task)).toEqual(task);
  });
});

describe("workers at once", () => {
  it("20 lease requests on 10 ready tasks: 10 distinct tasks and 10 × 204", async () => {
    const agent = await runningAgent(app);
    const tasks: TaskOut[] = [];
    for (let i = 0; i < 10; i++) tasks.push(await createTask(app, agent.id, { title: `t${i}` }));
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send<LeaseOut>(app, "POST", leasePath(agent.id), { worker: `w${i}` })),
    );
    const granted = answers.filter((answer) => answer.status === 201);
    expect(answers.filter((answer) => answer.status === 204)).toHaveLength(10);
    expect(granted).toHaveLength(10);
    expect(new Set(granted.map((answer) => answer.body.task_id))).toEqual(new Set(tasks.map((task) => task.id)));
    for (const answer of granted) {
      expect(await getTask(app, answer.body.task)).toMatchObject({ status: "running", lease: answer.body.task.lease });
    }
  });

  it("waiting workers each get a different task as tasks arrive", async () => {
    const agent = await runningAgent(app);
    const polls: Promise<Answer<LeaseOut>>[] = [];
    for (let i = 0; i < 8; i++) polls.push(send<LeaseOut>(app, "POST", leasePath(agent.id), { wait_seconds: 8 }));
    await waiting(Promise.race(polls));
    const tasks: TaskOut[] = [];
    for (let i = 0; i < 5; i++) tasks.push(await createTask(app, agent.id, { title: `t${i}` }));
    const answers = await Promise.all(polls.map((poll) => Promise.race([poll, sleep(3_000).then(() => undefined)])));
    const granted = answers.filter((answer) => answer?.status === 201) as Answer<LeaseOut>[];
    expect(granted.map((answer) => answer.body.task_id).sort()).toEqual(tasks.map((task) => task.id).sort());
    // The other three wait on; another task goes to one of them.
    const last = await createTask(app, agent.id, { title: "last" });
    const rest = await Promise.all(polls.filter((_, i) => answers[i] === undefined));
    expect(rest).toHaveLength(3);
    expect(rest.filter((answer) => answer.status === 201).map((answer) => answer.body.task_id)).toEqual([last.id]);
    expect(rest.filter((answer) => answer.status === 204)).toHaveLength(2);
  }, 40_000);
});
