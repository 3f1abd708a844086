import { type ChildProcess, spawn } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { EventOut } from "../src/modules/events/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { testProvider } from "./helpers/databases.js";
import { call, type ServiceProcess, servicesOnTestDatabase } from "./helpers/service.js";
import { isEvent, openStream, type SseMessage } from "./helpers/sse.js";

// The event log across real processes (docs/api/events.md): two instances on one
// database, a cluster of workers, and SIGTERM while a stream is open.
const { database, start } = servicesOnTestDatabase({ MAX_EVENT_LOOP_DELAY_MS: "60000", MAX_QUEUE_MS: "10000" });

const storedIdsAfter = async (mark: bigint) =>
  (
    await database().db.prisma.event.findMany({
      where: { id: { gt: mark } },
      select: { id: true },
      orderBy: { id: "asc" },
    })
  ).map((event) => String(event.id));

const headOf = async (baseUrl: string) => {
  // The newest event any reader can see now: the last of the pages.
  let after = "0";
  for (;;) {
    const page = await call<EventOut[]>(baseUrl, "GET", `/events?after=${after}&limit=1000`);
    if (page.body.length === 0) return BigInt(after);
    after = page.body.at(-1)?.id ?? after;
  }
};

const eventOf = (message: SseMessage) => JSON.parse(message.data ?? "") as EventOut;

describe(`two service processes on one ${testProvider} database`, () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  beforeAll(async () => {
    [a, b] = await Promise.all([start(), start()]);
  }, 180_000);

  it("50 concurrent writers on both: a stream and an `after` reader each see every event once, in order", async () => {
    const mark = await headOf(a.baseUrl);
    const stream = await openStream(`${a.baseUrl}/events/stream?after=${mark}`);
    const polled: string[] = [];
    let writing = true;
    const poller = (async () => {
      let after = String(mark);
      for (;;) {
        const last = !writing;
        const page = await call<EventOut[]>(b.baseUrl, "GET", `/events?after=${after}&limit=100`);
        polled.push(...page.body.map((event) => event.id));
        after = page.body.at(-1)?.id ?? after;
        if (last && page.body.length < 100) return;
      }
    })();
    const work = async (i: number) => {
      const base = (i % 2 === 0 ? a : b).baseUrl;
      const agent = await call<AgentOut>(base, "POST", "/agents", { name: `writer ${i}`, type: "worker" });
      await call(base, "PATCH", `/agents/${agent.body.id}`, { status: "running" });
      const task = await call<TaskOut>(base, "POST", `/agents/${agent.body.id}/tasks`, { title: `task ${i}` });
      await call(base, "PATCH", `/agents/${agent.body.id}/tasks/${task.body.id}`, { status: "running" });
      if (i % 2 === 1) await call(base, "DELETE", `/agents/${agent.body.id}`);
    };
    try {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          work(i).catch((error: Error) => {
            throw new Error(`writer ${i}: ${error.message} (${String(error.cause)})`);
          }),
        ),
      );
    } finally {
      writing = false;
      await poller;
    }
    const stored = await storedIdsAfter(mark);
    expect(stored).toHaveLength(50 * 4 + 25 * 2);
    expect(polled).toEqual(stored);
    try {
      const streamed = await stream.until(stored.length, isEvent);
      expect(streamed.map((message) => message.id)).toEqual(stored);
    } finally {
      stream.close();
    }
  }, 120_000);

  it("an event committed on one instance reaches a matching stream on the other within 1 s", async () => {
    const agent = await call<AgentOut>(b.baseUrl, "POST", "/agents", { name: "watched", type: "worker" });
    const stream = await openStream(`${a.baseUrl}/events/stream?agent_id=${agent.body.id}&types=task.*`);
    try {
      await stream.until(1); // retry: the stream is open, and listening
      for (let i = 0; i < 5; i++) {
        // Measured from the answer: the write had committed by then.
        const task = await call<TaskOut>(b.baseUrl, "POST", `/agents/${agent.body.id}/tasks`, { title: `t${i}` });
        const [message] = (await stream.until(i + 1, isEvent)).slice(i);
        expect(eventOf(message as SseMessage).task_id).toBe(task.body.id);
        expect((message as SseMessage).at - task.at).toBeLessThan(1000);
      }
    } finally {
      stream.close();
    }
  });
});

describe(`WEB_CONCURRENCY=2 on ${testProvider}`, () => {
  it("events written by either worker reach a stream on the other within 1 s", async () => {
    const primary: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        ...process.env,
        DATABASE_URL: database().url,
        PORT: "0",
        WEB_CONCURRENCY: "2",
        SEED_SAMPLE_DATA: "false",
        MAX_EVENT_LOOP_DELAY_MS: "60000",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    primary.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    try {
      const port = await new Promise<string>((resolve, reject) => {
        const poll = setInterval(() => {
          const listening = output.match(/"port":(\d+)/g) ?? [];
          if (listening.length >= 2) {
            clearInterval(poll);
            resolve(/"port":(\d+)/.exec(output)?.[1] ?? "");
          }
        }, 50);
        primary.once("exit", (code) => reject(new Error(`exited early with ${code}`)));
      });
      const base = `http://127.0.0.1:${port}`;
      const agent = await call<AgentOut>(base, "POST", "/agents", { name: "clustered", type: "worker" });
      const stream = await openStream(`${base}/events/stream?agent_id=${agent.body.id}&types=task.*`);
      try {
        await stream.until(1);
        // Fresh connections: the primary hands them to either worker, so both write.
        for (let i = 0; i < 8; i++) {
          const res = await fetch(`${base}/agents/${agent.body.id}/tasks`, {
            method: "POST",
            headers: { "content-type": "application/json", connection: "close" },
            body: JSON.stringify({ title: `t${i}` }),
          });
          const task = (await res.json()) as TaskOut;
          // Measured from the answer: the write had committed by then.
          const answered = Date.now();
          const [message] = (await stream.until(i + 1, isEvent)).slice(i);
          expect(eventOf(message as SseMessage).task_id).toBe(task.id);
          expect((message as SseMessage).at - answered).toBeLessThan(1000);
        }
      } finally {
        stream.close();
      }
      const exited = new Promise<number | null>((resolve) => primary.once("exit", (code) => resolve(code)));
      primary.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (primary.exitCode === null) primary.kill("SIGKILL");
    }
  }, 180_000);
});

describe("SIGTERM with a stream open", () => {
  it("ends the stream and exits 0 at once, without waiting for the stream", async () => {
    const service = await start();
    const stream = await openStream(`${service.baseUrl}/events/stream`);
    await stream.until(1);
    const signalled = Date.now();
    service.child.kill("SIGTERM");
    expect(await service.exited).toBe(0);
    await stream.ended;
    // Far below the 10 s given to requests in flight: the stream did not hold the shutdown.
    expect(Date.now() - signalled).toBeLessThan(5000);
  }, 180_000);
});
