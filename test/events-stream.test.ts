import { setTimeout as sleep } from "node:timers/promises";
import { createTRPCClient, httpSubscriptionLink } from "@trpc/client";
import { EventSource } from "eventsource";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.js";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import { followEvents } from "../src/modules/events/follow.js";
import { eventHubOf } from "../src/modules/events/hub.js";
import { recordEvents } from "../src/modules/events/outbox.js";
import { purgeEvents } from "../src/modules/events/purge.js";
import type { EventOut } from "../src/modules/events/schemas.js";
import { eventLogHead } from "../src/modules/events/sql.js";
import type { AppRouter } from "../src/modules/index.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { testProvider } from "./helpers/databases.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { isEvent, openStream, type SseMessage } from "./helpers/sse.js";

let app: TestApp;
beforeAll(async () => {
  // Shedding load is not what these tests are about: a busy machine must not turn their writes into 503s.
  app = await startTestApp({ MAX_STREAMS: "3", MAX_EVENT_LOOP_DELAY_MS: "60000" });
});
afterAll(() => app.close());

const logger = createLogger("silent");
const agentData = (id: string): { agent: AgentOut } => ({
  agent: {
    id,
    name: "recorded",
    type: "worker",
    status: "idle",
    created_at: "2026-11-25T22:39:57.123Z",
    updated_at: "2026-11-25T22:39:57.123Z",
    version: 1,
    metadata: {},
    concurrency: { max_running: null, max_running_per_key: null },
  },
});

/** `count` agent.created events recorded straight into the log, `perTransaction` at a time; their ids. */
async function record(count: number, perTransaction = 10): Promise<bigint[]> {
  const ids: bigint[] = [];
  for (let i = 0; i < count; i += perTransaction) {
    const batch = Array.from({ length: Math.min(perTransaction, count - i) }, () => {
      const id = crypto.randomUUID();
      return { type: "agent.created" as const, agentId: id, data: agentData(id) };
    });
    ids.push(...(await app.database.db.transaction((tx) => recordEvents(tx, defaultProjectId, batch))));
  }
  return ids;
}

const eventIds = (messages: SseMessage[]) => messages.filter(isEvent).map((message) => BigInt(message.id ?? ""));
const openStreams = () => eventHubOf(app.database.db, logger).open;
async function streamsClosed(count = 0) {
  for (let waited = 0; openStreams() > count; waited += 10) {
    if (waited > 5000) throw new Error(`${openStreams()} streams still open`);
    await sleep(10);
  }
}

describe(`resuming on ${testProvider}`, () => {
  it("from every position of a 1,000-event history, the stream replays exactly the suffix", async () => {
    const mark = await eventLogHead(app.database.db);
    const ids = await record(1000);
    const positions = [mark, ...ids];
    for (const [index, after] of positions.entries()) {
      const stop = new AbortController();
      const seen: bigint[] = [];
      // A keep-alive comes only once the replay is over and nothing new arrived.
      const items = followEvents({
        db: app.database.db,
        logger,
        projectId: defaultProjectId,
        after,
        maxStreams: 10,
        keepAliveMs: 1,
        signal: stop.signal,
      });
      for await (const item of items) {
        if (item.kind === "keep-alive") break;
        if (item.kind === "events") seen.push(...item.events.map((event) => event.id));
      }
      stop.abort();
      expect(seen, `after ${after}`).toEqual(ids.slice(index));
    }
    // The same over HTTP, for a sample of positions, with Last-Event-ID, then live.
    const live: string[] = [];
    for (const index of [0, 1, 499, 999, 1000]) {
      const stream = await openStream(`${app.baseUrl}/events/stream`, { "Last-Event-ID": String(positions[index]) });
      try {
        const replayed = 1000 - index + live.length;
        if (replayed > 0) await stream.until(replayed, isEvent);
        live.push((await createAgent(app, { name: `after ${index}` })).id);
        const messages = (await stream.until(replayed + 1, isEvent)).slice(0, replayed + 1);
        expect(eventIds(messages.slice(0, 1000 - index))).toEqual(ids.slice(index));
        expect(messages.slice(1000 - index).map((message) => JSON.parse(message.data ?? "").agent_id)).toEqual(live);
      } finally {
        stream.close();
      }
    }
  }, 300_000);

  it("events written while a stream replays: no gap and no duplicate where replay meets live", async () => {
    const mark = await eventLogHead(app.database.db);
    await record(3000, 50);
    let writing = true;
    const writers = Array.from({ length: 4 }, async () => {
      // SQLite's statements never wait for I/O: without a pause, these loops would starve everything else.
      while (writing) {
        await record(5, 5);
        await sleep(1);
      }
    });
    await sleep(20);
    const stream = await openStream(`${app.baseUrl}/events/stream?after=${mark}`);
    try {
      await stream.until(3500, isEvent, 60_000);
      writing = false;
      await Promise.all(writers);
      const stored = (
        await app.database.db.prisma.event.findMany({
          where: { id: { gt: mark } },
          select: { id: true },
          orderBy: { id: "asc" },
        })
      ).map((event) => event.id);
      const seen = eventIds(await stream.until(stored.length, isEvent, 60_000));
      expect(seen).toEqual(stored);
    } finally {
      writing = false;
      stream.close();
    }
  }, 120_000);

  it("a resume point already purged: `gap` with the oldest kept id first, then the events kept", async () => {
    const mark = await eventLogHead(app.database.db);
    const old = await record(20);
    await sleep(10);
    const cutoff = new Date();
    await sleep(10);
    const kept = await record(5);
    expect(await purgeEvents(app.database.db, cutoff)).toBeGreaterThanOrEqual(20);

    for (const from of [mark, old[10] as bigint]) {
      const stream = await openStream(`${app.baseUrl}/events/stream?after=${from}`);
      try {
        await stream.until(5, isEvent);
        expect(stream.messages.slice(0, 2)).toEqual([
          { retry: "3000", at: expect.any(Number) },
          { event: "gap", data: JSON.stringify({ oldest_id: String(kept[0]) }), at: expect.any(Number) },
        ]);
        expect(eventIds(stream.messages)).toEqual(kept);
      } finally {
        stream.close();
      }
    }
    // A reader that saw the last purged event missed nothing.
    const caughtUp = await openStream(`${app.baseUrl}/events/stream?after=${old.at(-1)}`);
    try {
      await caughtUp.until(5, isEvent);
      expect(caughtUp.messages.some((message) => message.event === "gap")).toBe(false);
    } finally {
      caughtUp.close();
    }
    const page = await app.request(`/events?after=${mark}`);
    expect(((await page.json()) as EventOut[]).map((event) => BigInt(event.id))).toEqual(kept);
  });

  it("purges in batches from the start of the log, never past the first event to keep", async () => {
    await record(1200, 100);
    await sleep(10);
    const cutoff = new Date();
    await sleep(10);
    const kept = await record(3);
    await purgeEvents(app.database.db, cutoff);
    expect(await purgeEvents(app.database.db, cutoff)).toBe(0);
    const left = await app.database.db.prisma.event.findMany({ select: { id: true }, orderBy: { id: "asc" } });
    expect(left.map((event) => event.id)).toEqual(kept);
  });
});

describe(`MAX_STREAMS on ${testProvider}`, () => {
  it("beyond the bound: 503 with Retry-After until a stream closes", async () => {
    await streamsClosed();
    const open = [
      await openStream(`${app.baseUrl}/events/stream`),
      await openStream(`${app.baseUrl}/events/stream`),
      await openStream(`${app.baseUrl}/events/stream`),
    ];
    try {
      expect(open.map((stream) => stream.status)).toEqual([200, 200, 200]);
      const refused = await app.request("/events/stream");
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(await refused.json()).toEqual({
        error: "unavailable",
        message: "Too many event streams are open; retry shortly",
      });
      open.pop()?.close();
      await streamsClosed(2);
      const again = await openStream(`${app.baseUrl}/events/stream`);
      expect(again.status).toBe(200);
      open.push(again);
    } finally {
      for (const stream of open) stream.close();
    }
  });
});

describe(`the tRPC subscription events.stream on ${testProvider}`, () => {
  it("sends tracked events with the same filters and resumes from lastEventId", async () => {
    await streamsClosed();
    const api = createTRPCClient<AppRouter>({
      links: [httpSubscriptionLink({ url: `${app.baseUrl}/trpc`, EventSource })],
    });
    const agent = await createAgent(app, { name: "subscribed" });
    const mark = String(await eventLogHead(app.database.db));
    const first = await createTask(app, agent.id, { title: "before" });
    const received: { id: string; data: unknown }[] = [];
    const failures: unknown[] = [];
    const subscription = api.events.stream.subscribe(
      { agent_id: agent.id, types: "task.*", lastEventId: mark },
      { onData: (item) => received.push(item), onError: (error) => failures.push(error) },
    );
    try {
      await expect.poll(() => received.length, { timeout: 10_000 }).toBe(1);
      await createAgent(app, { name: "not followed" });
      const second = await createTask(app, agent.id, { title: "after" });
      await expect.poll(() => received.length, { timeout: 10_000 }).toBe(2);
      expect(received.map((item) => [item.id, (item.data as EventOut).type, (item.data as EventOut).task_id])).toEqual([
        [expect.stringMatching(/^\d+$/), "task.created", first.id],
        [expect.stringMatching(/^\d+$/), "task.created", second.id],
      ]);
      expect((received[1]?.data as EventOut | undefined)?.data.task).toEqual(second);
      expect(failures).toEqual([]);
    } finally {
      subscription.unsubscribe();
    }
  });

  it("refuses bad input with the validation error's kind and fields", async () => {
    const api = createTRPCClient<AppRouter>({
      links: [httpSubscriptionLink({ url: `${app.baseUrl}/trpc`, EventSource })],
    });
    const failure = await new Promise<{ data?: { httpStatus?: number; error?: string; details?: unknown } }>(
      (resolve) => {
        const subscription = api.events.stream.subscribe(
          { types: "nope" },
          {
            onError: (error) => {
              subscription.unsubscribe();
              resolve(error as never);
            },
          },
        );
      },
    );
    expect(failure.data).toMatchObject({
      httpStatus: 400,
      error: "validation_error",
      details: { issues: [{ field: "types", message: "unknown event types: nope" }] },
    });
  });
});
