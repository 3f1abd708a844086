import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { LeaseOut } from "../src/modules/leases/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { call, type ServiceProcess, servicesOnTestDatabase } from "./helpers/service.js";

// Fair dispatch across real processes (docs/api/leases.md): two service instances
// on one database, worker processes on the SDK (examples/worker.ts) asking both at
// once, one of them killed with kill -9, limits that must hold at every instant,
// and a slot freed on one instance waking a long poll on the other.
const { database, start } = servicesOnTestDatabase({ TASK_RETRY_BASE_SECONDS: "0.5", TASK_RETRY_MAX_SECONDS: "1" });

interface Span {
  task: string;
  key: string;
  /** The lease's `worker`. */
  worker: string;
  from: number;
  to: number;
  /** The event that ended the lease: its type, and the task's status after it (a release: task.updated, pending). */
  end: string;
  status: string;
}

/** The most spans open at once: ends sort before starts at the same instant (a slot freed, then taken). */
function mostAtOnce(spans: Span[]): number {
  const edges = spans.flatMap((span) => [
    [span.from, 1],
    [span.to, -1],
  ]);
  edges.sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
  let open = 0;
  let most = 0;
  for (const [, step] of edges) {
    open += step as number;
    most = Math.max(most, open);
  }
  return most;
}

/** Every lease of the agent's tasks as a span, from its task.leased to the event that ended it, read from the event log. */
async function leaseSpans(agentId: string, keys: Map<string, string>): Promise<Span[]> {
  const events = await database().db.prisma.event.findMany({ where: { agentId }, orderBy: { id: "asc" } });
  const open = new Map<string, { from: number; worker: string }>();
  const spans: Span[] = [];
  for (const event of events) {
    if (event.taskId === null) continue;
    const at = event.occurredAt.getTime();
    const data = JSON.parse(event.data) as { task: TaskOut };
    if (event.type === "task.leased") {
      expect(open.has(event.taskId), "a task leased twice at once").toBe(false);
      open.set(event.taskId, { from: at, worker: data.task.lease?.worker ?? "" });
      continue;
    }
    const lease = open.get(event.taskId);
    if (lease !== undefined && data.task.status !== "running") {
      spans.push({
        task: event.taskId,
        key: keys.get(event.taskId) ?? "",
        ...lease,
        to: at,
        end: event.type,
        status: data.task.status,
      });
      open.delete(event.taskId);
    }
  }
  expect(open.size, "every lease ended").toBe(0);
  return spans;
}

async function runningAgent(baseUrl: string, concurrency: object): Promise<AgentOut> {
  const agent = await call<AgentOut>(baseUrl, "POST", "/agents", { name: "fleet", type: "worker", concurrency });
  expect(agent.status).toBe(201);
  expect((await call(baseUrl, "PATCH", `/agents/${agent.body.id}`, { status: "running" })).status).toBe(200);
  return agent.body;
}

interface WorkerProcess {
  child: ChildProcess;
  /** What it printed so far, a line per lease and outcome (examples/worker.ts). */
  lines: string[];
  stderr: () => string;
  exited: Promise<unknown[]>;
}

/**
 * The worker example (examples/worker.ts, on the SDK) with 4 slots and 5 s leases, as its own OS process. Node runs
 * it through tsx's loader, not the tsx command, whose node child a signal to the command would not reach.
 */
function startWorker(baseUrl: string, agentId: string, onLine: (line: string) => void): WorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/worker.ts"], {
    cwd: new URL("..", import.meta.url).pathname,
    env: { ...process.env, API_URL: baseUrl, AGENT_ID: agentId, CONCURRENCY: "4", LEASE_SECONDS: "5" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = once(child, "exit");
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    onLine(line);
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return { child, lines, stderr: () => stderr, exited };
}

const until = async (done: () => boolean | Promise<boolean>) => {
  while (!(await done())) await sleep(20);
};

type Line = "leased" | "succeeded";

/**
 * SIGKILL for `worker` while it holds leases, so that it dies mid-task however fast the tasks go: it is stopped
 * (SIGSTOP) as it prints a lease, and once two reads of the database half a second apart agree on the running tasks
 * leased to it (what it sent before it stopped has been answered), it is killed as the next task of another worker
 * succeeds; none (its task was quicker than the signal), and it goes on to its next lease. Its worker name (found
 * through a task it printed as leased) and the tasks it held when killed: a stopped process renews nothing and
 * reports nothing, so none of them ended in between.
 */
async function killHolding(worker: WorkerProcess, agentId: string, next: (line: Line) => Promise<void>) {
  const prisma = database().db.prisma;
  const heldBy = async (name: string) =>
    (await prisma.task.findMany({ where: { agentId, status: "running", leaseWorker: name }, orderBy: { id: "asc" } }))
      .map((task) => task.id)
      .join(" ");
  const printed = () => worker.lines.flatMap((line) => (line.startsWith("leased ") ? [line.split(" ")[1] ?? ""] : []));
  for (;;) {
    await next("leased");
    worker.child.kill("SIGSTOP");
    let before = "";
    let held = "-";
    let name: string | null | undefined;
    while (held !== before) {
      before = held;
      await sleep(500);
      name ??= (await prisma.task.findFirst({ where: { agentId, status: "running", id: { in: printed() } } }))
        ?.leaseWorker;
      held = name ? await heldBy(name) : "";
    }
    if (name && held !== "") {
      // Just after another worker's task succeeded: that freed a slot and woke the long polls, its own among them.
      await next("succeeded");
      worker.child.kill("SIGKILL");
      expect(await worker.exited).toEqual([null, "SIGKILL"]);
      return { name, held: held.split(" ") };
    }
    worker.child.kill("SIGCONT");
  }
}

/**
 * 300 tasks over 5 keys, run by 3 worker processes of 4 slots (12 at once, 8 allowed), the first on instance a,
 * the second on b, the third on a; with `kill`, the third is killed with kill -9 midway. Once every task
 * succeeded the others are stopped (SIGTERM, and they exit 0).
 */
async function runFleet([a, b]: [ServiceProcess, ServiceProcess], kill: boolean) {
  const agent = await runningAgent(a.baseUrl, { max_running: 8, max_running_per_key: 2 });
  const keys = new Map<string, string>();
  const creations = [];
  for (let i = 0; i < 300; i++) {
    // 50–149 ms of work each (the example's handler waits `ms`).
    const body = {
      title: `t${i}`,
      concurrency_key: `key-${i % 5}`,
      max_attempts: 3,
      input: { ms: 50 + ((i * 37) % 100) },
    };
    creations.push(call<TaskOut>((i % 2 ? a : b).baseUrl, "POST", `/agents/${agent.id}/tasks`, body));
    if (creations.length === 20) {
      for (const created of await Promise.all(creations.splice(0))) {
        expect(created.status).toBe(201);
        keys.set(created.body.id, created.body.concurrency_key as string);
      }
    }
  }
  let printed = 0;
  const waiting: Record<Line, () => void> = { leased: () => {}, succeeded: () => {} };
  const next = (line: Line) =>
    new Promise<void>((resolve) => {
      waiting[line] = resolve;
    });
  const started = (service: ServiceProcess, n: number) =>
    startWorker(service.baseUrl, agent.id, (line) => {
      if (line.startsWith("succeeded ")) {
        printed++;
        waiting.succeeded();
      } else if (n === 2 && line.startsWith("leased ")) waiting.leased();
    });
  // The third first, until it has taken a task: two workers' 8 slots can keep the agent's 8 running tasks to
  // themselves (each slot asks again as soon as its task is done), and the one to be killed must hold some then.
  const third = started(a, 2);
  await next("leased");
  const workers = [started(a, 0), started(b, 1), third];
  try {
    const succeeded = () => database().db.prisma.task.count({ where: { agentId: agent.id, status: "succeeded" } });
    const done = until(async () => (await succeeded()) === 300);
    let killed: { name: string; held: string[] } | undefined;
    if (kill) {
      await until(() => printed >= 100);
      killed = await Promise.race([killHolding(third, agent.id, next), done.then(() => undefined)]);
      if (!killed) throw new Error("the third worker took no task after the 100th success");
    }
    await done;
    const survivors = kill ? workers.slice(0, 2) : workers;
    for (const worker of survivors) worker.child.kill("SIGTERM");
    for (const worker of survivors) {
      expect(await worker.exited, worker.stderr()).toEqual([0, null]);
      expect(worker.lines.at(-1)).toBe("stopped");
    }
    return { agentId: agent.id, keys, killed };
  } finally {
    for (const worker of workers)
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
  }
}

/** What became of a fleet's run: every task succeeded once, within the limits at every instant; its leases. */
async function checkFleet(agentId: string, keys: Map<string, string>) {
  const tasks = await database().db.prisma.task.findMany({ where: { agentId } });
  expect(tasks).toHaveLength(300);
  expect(tasks.filter((task) => task.status === "succeeded")).toHaveLength(300);
  // Exactly once to success: one task.succeeded per task.
  const successes = await database().db.prisma.event.findMany({ where: { agentId, type: "task.succeeded" } });
  expect(new Set(successes.map((event) => event.taskId)).size).toBe(300);
  expect(successes).toHaveLength(300);

  const spans = await leaseSpans(agentId, keys);
  expect(spans.filter((span) => span.end === "task.succeeded")).toHaveLength(300);
  expect(mostAtOnce(spans)).toBeLessThanOrEqual(8);
  // Not a test that never ran anything at once: the workers kept the agent busy.
  expect(mostAtOnce(spans)).toBeGreaterThanOrEqual(4);
  for (let k = 0; k < 5; k++) {
    expect(mostAtOnce(spans.filter((span) => span.key === `key-${k}`)), `key-${k}`).toBeLessThanOrEqual(2);
  }
  return { tasks, spans };
}

describe("two service processes on one database", () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  beforeAll(async () => {
    [a, b] = await Promise.all([start(), start()]);
  }, 120_000);

  it("3 worker processes of 4 slots on both instances, 300 tasks over 5 keys: never past max_running 8 or " +
    "max_running_per_key 2, and every task succeeds exactly once, its first lease its only one", async () => {
    const { agentId, keys } = await runFleet([a, b], false);
    const { tasks, spans } = await checkFleet(agentId, keys);
    expect(spans).toHaveLength(300);
    expect(tasks.filter((task) => task.attempts !== 0)).toEqual([]);
  }, 120_000);

  it("the same with one worker process killed with kill -9 midway: its tasks are retried once their leases " +
    "expire, and none is lost", async () => {
    const { agentId, keys, killed } = await runFleet([a, b], true);
    if (!killed) throw new Error("killed midway");
    const { tasks, spans } = await checkFleet(agentId, keys);
    expect(killed.held.length).toBeGreaterThan(0);
    // Every lease that did not end in success was the dead worker's, and ended in one of two ways. Those it held
    // expired, 5 s after they were granted, an attempt each. And its long polls were still open when it died: a
    // claim for one of them can take a task just then, and either the answer goes to a socket nobody reads (the
    // lease expires, though the worker never printed it) or the claim finds its client gone and the service gives
    // the task straight back (task.updated, pending again, no attempt). So the leases number 300 successes plus
    // the expiries plus those given back; neither the worker's output nor the tasks' attempts count them all.
    const unsuccessful = spans.filter((span) => span.end !== "task.succeeded");
    expect(unsuccessful.filter((span) => span.worker !== killed.name)).toEqual([]);
    const expired = unsuccessful.filter((span) => span.end === "task.lease_expired");
    const givenBack = unsuccessful.filter((span) => span.end === "task.updated" && span.status === "pending");
    expect(spans).toHaveLength(300 + expired.length + givenBack.length);
    expect(expired.filter((span) => span.to - span.from < 5000)).toEqual([]);
    expect(tasks.filter((task) => task.attempts !== expired.filter((span) => span.task === task.id).length)).toEqual(
      [],
    );
    // The tasks it held when killed: retried once their leases expired, by another worker.
    for (const id of killed.held) {
      const ofTask = spans.filter((span) => span.task === id);
      expect(ofTask.map((span) => [span.end, span.worker === killed.name])).toEqual([
        ["task.lease_expired", true],
        ["task.succeeded", false],
      ]);
    }
  }, 120_000);

  it("a slot freed through one instance answers a long poll waiting on the other", async () => {
    const agent = await runningAgent(a.baseUrl, { max_running: 1 });
    for (let i = 0; i < 2; i++) {
      expect((await call(a.baseUrl, "POST", `/agents/${agent.id}/tasks`, { title: `t${i}` })).status).toBe(201);
    }
    const first = await call<LeaseOut>(a.baseUrl, "POST", `/agents/${agent.id}/leases`, {});
    expect(first.status).toBe(201);
    let answered = false;
    const waiting = call<LeaseOut>(b.baseUrl, "POST", `/agents/${agent.id}/leases`, { wait_seconds: 20 }).then(
      (answer) => {
        answered = true;
        return answer;
      },
    );
    await sleep(500);
    expect(answered, "held back by max_running").toBe(false);
    const finishedAt = Date.now();
    const done = await call(a.baseUrl, "PATCH", `/agents/${agent.id}/tasks/${first.body.task_id}`, {
      lease_id: first.body.id,
      status: "succeeded",
    });
    expect(done.status).toBe(200);
    const second = await waiting;
    expect(second.status).toBe(201);
    expect(second.body.task_id).not.toBe(first.body.task_id);
    // Woken by the finish's notification, not by the end of its wait (20 s).
    expect(second.at - finishedAt).toBeLessThan(10_000);
  }, 60_000);

  it("a pool lease on one instance is woken by a task created through the other, and keeps the agent's limit", async () => {
    const agent = await runningAgent(a.baseUrl, { max_running: 1 });
    await call(a.baseUrl, "PATCH", `/agents/${agent.id}`, { metadata: { pool: "processes" } });
    const waiting = call<LeaseOut>(b.baseUrl, "POST", "/leases", { metadata: { pool: "processes" }, wait_seconds: 20 });
    await sleep(500);
    const createdAt = Date.now();
    const task = await call<TaskOut>(a.baseUrl, "POST", `/agents/${agent.id}/tasks`, { title: "pooled" });
    const got = await waiting;
    expect(got.status).toBe(201);
    expect(got.body.task_id).toBe(task.body.id);
    expect(got.at - createdAt).toBeLessThan(10_000);
    await call(a.baseUrl, "POST", `/agents/${agent.id}/tasks`, { title: "held back" });
    expect((await call(a.baseUrl, "POST", "/leases", { metadata: { pool: "processes" } })).status).toBe(204);
  }, 60_000);
});
