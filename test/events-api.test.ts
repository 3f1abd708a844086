import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventOut } from "../src/modules/events/schemas.js";
import { eventLogHead } from "../src/modules/events/sql.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { testProvider } from "./helpers/databases.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { isEvent, openStream } from "./helpers/sse.js";

let app: TestApp;
beforeAll(async () => {
  // Shedding load is not what these tests are about: a busy machine must not turn their requests into 503s.
  app = await startTestApp({ STREAM_KEEPALIVE_SECONDS: "0.3", MAX_EVENT_LOOP_DELAY_MS: "60000" });
});
afterAll(() => app.close());

const list = async (query: string) => {
  const res = await app.request(`/events?${query}`);
  return { status: res.status, link: res.headers.get("link"), body: (await res.json()) as EventOut[] };
};

describe(`GET /events on ${testProvider}`, () => {
  it("pages in id order with the filters, and Link rel=next exactly when a page was full", async () => {
    const after = String(await eventLogHead(app.database.db));
    const agent = await createAgent(app, { name: "paged" });
    const other = await createAgent(app, { name: "other" });
    const task = await createTask(app, agent.id, { title: "one" });
    await createTask(app, other.id, { title: "elsewhere" });
    await app.request(`/agents/${agent.id}/tasks/${task.id}`, { method: "PATCH", json: { status: "running" } });

    const all = await list(`after=${after}`);
    expect(all.status).toBe(200);
    expect(all.link).toBeNull();
    expect(all.body.map((event) => event.type)).toEqual([
      "agent.created",
      "agent.created",
      "task.created",
      "task.created",
      "task.updated",
    ]);
    const ids = all.body.map((event) => BigInt(event.id));
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
    expect(all.body[0]).toEqual({
      id: expect.stringMatching(/^\d+$/),
      type: "agent.created",
      occurred_at: agent.created_at,
      agent_id: agent.id,
      task_id: null,
      data: { agent },
    });
    expect(all.body[4]?.data.changes).toEqual({ status: ["pending", "running"] });

    const first = await list(`after=${after}&limit=2`);
    expect(first.body.map((event) => event.id)).toEqual(all.body.slice(0, 2).map((event) => event.id));
    expect(first.link).toBe(`</events?after=${all.body[1]?.id}&limit=2>; rel="next"`);

    const mine = await list(`after=${after}&agent_id=${agent.id}&types=task.*`);
    expect(mine.body.map((event) => [event.type, event.task_id])).toEqual([
      ["task.created", task.id],
      ["task.updated", task.id],
    ]);
    const full = await list(`after=${after}&agent_id=${agent.id}&types=task.*,agent.created&limit=3`);
    expect(full.body.map((event) => event.type)).toEqual(["agent.created", "task.created", "task.updated"]);
    expect(full.link).toBe(
      `</events?after=${full.body[2]?.id}&limit=3&agent_id=${agent.id}&types=task.*%2Cagent.created>; rel="next"`,
    );
    const next = await app.request(full.link?.slice(1, full.link.indexOf(">")) ?? "");
    expect(await next.json()).toEqual([]);
    expect((await list(`after=${after}&agent_id=nobody`)).body).toEqual([]);
  });

  it.each([
    ["after=x", "after", "must be an event id (decimal digits)"],
    ["after=-1", "after", "must be an event id (decimal digits)"],
    ["after=99999999999999999999", "after", "must be an event id (decimal digits)"],
    ["limit=0", "limit", expect.any(String)],
    ["limit=1001", "limit", expect.any(String)],
    ["limit=ten", "limit", expect.any(String)],
    ["types=task.nope", "types", "unknown event types: task.nope"],
    ["types=task.*,*", "types", "unknown event types: *"],
  ])("400 in the contract's format for %s", async (query, field, message) => {
    for (const path of ["/events", "/events/stream"]) {
      if (path === "/events/stream" && field === "limit") continue;
      const res = await app.request(`${path}?${query}`);
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await res.json()).toEqual({
        error: "validation_error",
        message: expect.any(String),
        details: { issues: [{ field, message }] },
      });
    }
  });

  it("400 for a Last-Event-ID that is not an event id", async () => {
    for (const value of ["abc", "12 34", "-5", "1.5"]) {
      const res = await app.request("/events/stream", { headers: { "Last-Event-ID": value } });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: "validation_error",
        message: expect.any(String),
        details: { issues: [{ field: "Last-Event-ID", message: "must be an event id (decimal digits)" }] },
      });
    }
  });
});

describe(`GET /events/stream on ${testProvider}`, () => {
  it("retry first, then new events only as they commit; keep-alive comments in silence", async () => {
    const agent = await createAgent(app, { name: "before the stream" });
    const stream = await openStream(`${app.baseUrl}/events/stream`);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(stream.headers.get("cache-control")).toBe("no-store");
      await stream.until(1);
      expect(stream.messages[0]).toMatchObject({ retry: "3000" });
      await stream.until(1, (message) => message.comment === "keep-alive");
      const task = await createTask(app, agent.id, { title: "live" });
      const [message] = await stream.until(1, isEvent);
      expect(message?.event).toBe("task.created");
      const event = JSON.parse(message?.data ?? "") as EventOut;
      expect(message?.id).toBe(event.id);
      expect(event).toEqual({
        id: expect.stringMatching(/^\d+$/),
        type: "task.created",
        occurred_at: task.created_at,
        agent_id: agent.id,
        task_id: task.id,
        data: { task },
      });
    } finally {
      stream.close();
    }
  });

  it("replays after Last-Event-ID (which wins over after), then goes live; filters apply to both", async () => {
    const from = String(await eventLogHead(app.database.db));
    const agent = await createAgent(app, { name: "followed" });
    const other = await createAgent(app, { name: "ignored" });
    await createTask(app, agent.id, { title: "old" });
    await createTask(app, other.id, { title: "old elsewhere" });
    const stream = await openStream(`${app.baseUrl}/events/stream?after=1&agent_id=${agent.id}&types=task.*`, {
      "Last-Event-ID": from,
    });
    try {
      await stream.until(1, isEvent);
      await createTask(app, other.id, { title: "new elsewhere" });
      await createAgent(app, { name: "not a task" });
      await createTask(app, agent.id, { title: "new" });
      const events = (await stream.until(2, isEvent)).map((message) => JSON.parse(message.data ?? "") as EventOut);
      expect(events.map((event) => [event.type, event.data.task?.title])).toEqual([
        ["task.created", "old"],
        ["task.created", "new"],
      ]);
    } finally {
      stream.close();
    }
  });
});
