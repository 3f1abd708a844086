import { randomUUID } from "node:crypto";
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isoFromSqlite, sqliteTimestamp } from "../src/db/values.js";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { EventOut } from "../src/modules/events/schemas.js";
import type { AppRouter } from "../src/modules/index.js";
import type { LeaseOut } from "../src/modules/leases/schemas.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { dateTime, instantOf, timestamp } from "../src/resources/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { testProvider } from "./helpers/databases.js";
import { dateCase, dateString, expectedInstant } from "./helpers/dates.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { runningAgent, send } from "./helpers/leases.js";

// docs/http.md, Conventions: every date-time the API reads lies within years 0001–9999 once in UTC,
// else 400 naming the field; what is accepted is stored, answered and read back alike.
let app: TestApp;
let client: ReturnType<typeof createTRPCClient<AppRouter>>;
beforeAll(async () => {
  app = await startTestApp();
  client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc` })] });
});
afterAll(() => app.close());

const rangeMessage = "must lie within years 0001–9999 once converted to UTC";
const refusal = (field: string) => ({
  error: "validation_error",
  message: `Request validation failed: ${field}: ${rangeMessage}`,
  details: { issues: [{ field, message: rangeMessage }] },
});
/** Year −1 and year 10000 once in UTC, the dates of the report; and the first instants past each end. */
const outOfRange = [
  "0000-01-01T00:30:00+01:00",
  "9999-12-31T23:59:59-14:00",
  "0000-12-31T23:59:59.999Z",
  "9999-12-31T23:59:59.999-00:01",
];

const taskCount = (agentId: string) => app.database.db.prisma.task.count({ where: { agentId } });
const eventCount = () => app.database.db.prisma.event.count();

describe(`dates out of range on ${testProvider}`, () => {
  it("POST and PATCH of a task answer 400 naming the field, and store nothing", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const events = await eventCount();
    for (const date of outOfRange) {
      for (const field of ["run_at", "deadline_at"]) {
        const created = await send(app, "POST", `/agents/${agent.id}/tasks`, { title: "t", [field]: date });
        expect(created.status, `${field} ${date}`).toBe(400);
        expect(created.body).toEqual(refusal(field));
        const patched = await send(app, "PATCH", `/agents/${agent.id}/tasks/${task.id}`, { [field]: date });
        expect(patched.status, `${field} ${date}`).toBe(400);
        expect(patched.body).toEqual(refusal(field));
      }
    }
    expect(await taskCount(agent.id)).toBe(1);
    expect(await eventCount()).toBe(events);
    expect((await send(app, "GET", `/agents/${agent.id}/tasks/${task.id}`)).body).toEqual(task);
  });

  it("over tRPC too: BAD_REQUEST naming the field, nothing stored", async () => {
    const agent = await createAgent(app);
    const task = await createTask(app, agent.id);
    const issues = async (call: Promise<unknown>) => {
      const error = await call.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TRPCClientError);
      const data = (error as TRPCClientError<AppRouter>).data as { code: string; details: unknown };
      expect(data.code).toBe("BAD_REQUEST");
      return data.details;
    };
    for (const date of outOfRange) {
      expect(await issues(client.tasks.create.mutate({ agent_id: agent.id, title: "t", run_at: date }))).toEqual(
        refusal("run_at").details,
      );
      expect(
        await issues(client.tasks.update.mutate({ agent_id: agent.id, task_id: task.id, deadline_at: date })),
      ).toEqual(refusal("deadline_at").details);
      expect(await issues(client.agents.list.query({ created_after: date }))).toEqual(refusal("created_after").details);
    }
    expect(await taskCount(agent.id)).toBe(1);
  });

  it("a refused write leaves the event log readable: paging GET /events from the start passes it", async () => {
    const agent = await runningAgent(app);
    const headers = { "idempotency-key": randomUUID() };
    const poison = { title: "poison", run_at: "0000-01-01T00:30:00+01:00" };
    // The first try, then a retry with the same key: each is refused, neither creates a task.
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await app.request(`/agents/${agent.id}/tasks`, { method: "POST", headers, json: poison });
      expect(answer.status).toBe(400);
      expect(await answer.json()).toEqual(refusal("run_at"));
    }
    expect(await taskCount(agent.id)).toBe(0);
    // Dates at the very ends are stored and read back.
    const earliest = await createTask(app, agent.id, { title: "earliest", run_at: "0001-01-01T01:00:00+01:00" });
    expect(earliest.run_at).toBe("0001-01-01T00:00:00.000Z");
    const latest = await createTask(app, agent.id, {
      title: "latest",
      run_at: "9999-12-31T23:59:59.999Z",
      deadline_at: "9999-12-31T23:59:59.9999999-00:00",
    });
    expect(latest).toMatchObject({ run_at: "9999-12-31T23:59:59.999Z", deadline_at: "9999-12-31T23:59:59.999Z" });

    const list = await send<TaskOut[]>(app, "GET", `/agents/${agent.id}/tasks`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([earliest, latest]);
    const lease = await send<LeaseOut>(app, "POST", `/agents/${agent.id}/leases`, {});
    expect(lease.status).toBe(201);
    expect(lease.body.task_id).toBe(earliest.id);

    let next: string | undefined = "/events?limit=3";
    const seen: EventOut[] = [];
    while (next) {
      const page = await app.request(next);
      expect(page.status, next).toBe(200);
      seen.push(...((await page.json()) as EventOut[]));
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.get("link") ?? "")?.[1];
    }
    const mine = seen.filter((event) => event.agent_id === agent.id).map((event) => [event.type, event.task_id]);
    expect(mine).toEqual([
      ["agent.created", null],
      ["agent.updated", null],
      ["task.created", earliest.id],
      ["task.created", latest.id],
      ["task.leased", earliest.id],
    ]);
  });
});

describe(`date filters on ${testProvider}`, () => {
  let agents: AgentOut[];
  let query: string;
  const listed = async (filter: string) => {
    const res = await send<AgentOut[]>(app, "GET", `/agents?${query}&${filter}`);
    return { status: res.status, ids: res.status === 200 ? res.body.map((agent) => agent.id) : res.body };
  };
  beforeAll(async () => {
    const group = randomUUID();
    query = `metadata%5Bgroup%5D=${group}`;
    agents = [];
    for (let i = 0; i < 3; i++) agents.push(await createAgent(app, { name: `dated ${i}`, metadata: { group } }));
  });

  it.each([
    ["created_after", "0000-01-01T00:00:00Z"],
    ["created_before", "0000-01-01T00:00:00Z"],
    ["created_after", "9999-12-31T23:59:59-14:00"],
    ["created_before", "9999-12-31T23:59:59-14:00"],
    ["created_after", "0000-12-31T23:59:59.9999Z"],
  ])("%s=%s is 400, on agents and on tasks", async (field, date) => {
    const agentsAnswer = await send(app, "GET", `/agents?${field}=${encodeURIComponent(date)}`);
    expect(agentsAnswer.status).toBe(400);
    expect(agentsAnswer.body).toEqual(refusal(field));
    const tasksAnswer = await send(app, "GET", `/agents/${agents[0]?.id}/tasks?${field}=${encodeURIComponent(date)}`);
    expect(tasksAnswer.status).toBe(400);
    expect(tasksAnswer.body).toEqual(refusal(field));
  });

  it("the ends of the range filter as instants", async () => {
    const all = agents.map((agent) => agent.id);
    expect(await listed("created_after=0001-01-01T00:00:00Z")).toEqual({ status: 200, ids: all });
    expect(await listed("created_before=0001-01-01T00:00:00.0001Z")).toEqual({ status: 200, ids: [] });
    expect(await listed("created_before=9999-12-31T23:59:59.999Z")).toEqual({ status: 200, ids: all });
    expect(await listed("created_before=9999-12-31T23:59:59.9999Z")).toEqual({ status: 200, ids: all });
    expect(await listed(`created_before=${encodeURIComponent("9999-12-31T23:59:59+14:00")}`)).toEqual({
      status: 200,
      ids: all,
    });
    expect(await listed("created_after=9999-12-31T23:59:59.999Z")).toEqual({ status: 200, ids: [] });
  });

  it("a filter with an offset compares as the instant it stands for", async () => {
    const [a, b, c] = agents as [AgentOut, AgentOut, AgentOut];
    const inZone = (iso: string, minutes: number) => {
      const shifted = new Date(Date.parse(iso) + minutes * 60_000).toISOString().slice(0, 23);
      const sign = minutes < 0 ? "-" : "+";
      const hours = String(Math.floor(Math.abs(minutes) / 60)).padStart(2, "0");
      return encodeURIComponent(`${shifted}${sign}${hours}:${String(Math.abs(minutes) % 60).padStart(2, "0")}`);
    };
    const later = [b, c].filter((x) => x.created_at > a.created_at).map((x) => x.id);
    expect(await listed(`created_after=${inZone(a.created_at, 300)}`)).toEqual({ status: 200, ids: later });
    expect(await listed(`created_after=${inZone(a.created_at, -14 * 60)}`)).toEqual({ status: 200, ids: later });
    const earlier = [a, b].filter((x) => x.created_at < c.created_at).map((x) => x.id);
    expect(await listed(`created_before=${inZone(c.created_at, 14 * 60)}`)).toEqual({ status: 200, ids: earlier });
  });
});

describe("the date rule and the answer's timestamp agree", () => {
  it("every date-time accepted is a timestamp once stored, and the instant it says to the millisecond", () => {
    fc.assert(
      fc.property(dateCase, (parts) => {
        const text = dateString(parts);
        const expected = expectedInstant(parts);
        const accepted = dateTime.safeParse(text).success;
        expect(accepted, text).toBe(expected !== undefined);
        if (!accepted) return;
        const instant = instantOf(text);
        expect(instant.toISOString(), text).toBe(expected);
        // As SQLite stores and answers it; PostgreSQL's timestamp(3) gets the same ISO text.
        const answered = isoFromSqlite(sqliteTimestamp(instant));
        expect(answered, text).toBe(expected);
        expect(timestamp.safeParse(answered).success, text).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });
});
