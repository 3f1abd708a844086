import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventOut } from "../src/modules/events/schemas.js";
import { eventLogHead } from "../src/modules/events/sql.js";
import type { AppRouter } from "../src/modules/index.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { testProvider } from "./helpers/databases.js";
import { dateCase, dateString, expectedInstant } from "./helpers/dates.js";
import { createAgent, createTask } from "./helpers/factories.js";
import { send } from "./helpers/leases.js";
import { isEvent, openStream } from "./helpers/sse.js";

// docs/http.md, Conventions: any date-time sent is either refused (400 naming
// the field) or stored, and then read back alike by every read path: the
// task, the task list, the event page and the event stream.
let app: TestApp;
let client: ReturnType<typeof createTRPCClient<AppRouter>>;
beforeAll(async () => {
  // A busy machine must not turn these requests into 503s.
  app = await startTestApp({ MAX_EVENT_LOOP_DELAY_MS: "600000" });
  client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc` })] });
});
afterAll(() => app.close());

/** Requests sent, and dates tried, per database: 45 batches of 50. */
const batchSize = 50;
const batches = 45;

type Field = "run_at" | "deadline_at";
type Dates = Pick<TaskOut, "run_at" | "deadline_at">;
const earliest = "0001-01-01T00:00:00Z";
const datesOf = ({ run_at, deadline_at }: Dates): Dates => ({ run_at, deadline_at });

/** What a write's answer was: the task written, or the fields a 400 named. */
type Outcome = { task: TaskOut } | { refused: string[] };

async function restWrite(method: "POST" | "PATCH", path: string, body: Record<string, unknown>): Promise<Outcome> {
  const answer = await send<TaskOut & { details: { issues: { field: string }[] } }>(app, method, path, body);
  if (answer.status === 400) return { refused: answer.body.details.issues.map((issue) => issue.field) };
  expect(answer.status, `${method} ${JSON.stringify(body)}`).toBe(method === "POST" ? 201 : 200);
  return { task: answer.body };
}

async function trpcWrite(write: () => Promise<TaskOut>): Promise<Outcome> {
  try {
    return { task: await write() };
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCClientError);
    const data = (error as TRPCClientError<AppRouter>).data as {
      code: string;
      details: { issues: { field: string }[] };
    };
    expect(data.code).toBe("BAD_REQUEST");
    return { refused: data.details.issues.map((issue) => issue.field) };
  }
}

/**
 * One date, sent as `field` of a new task (a deadline after run_at 0001-01-01) or of a
 * PATCH of a new pending task, over REST or tRPC; the dates the task has after it.
 */
async function write(agentId: string, field: Field, patch: boolean, trpc: boolean, date: string) {
  const values = field === "deadline_at" ? { run_at: earliest, deadline_at: date } : { run_at: date };
  if (!patch) {
    const outcome = trpc
      ? await trpcWrite(() => client.tasks.create.mutate({ agent_id: agentId, title: "dated", ...values }))
      : await restWrite("POST", `/agents/${agentId}/tasks`, { title: "dated", ...values });
    return { outcome, before: undefined };
  }
  const before = await createTask(app, agentId, field === "deadline_at" ? { run_at: earliest } : {});
  const outcome = trpc
    ? await trpcWrite(() => client.tasks.update.mutate({ agent_id: agentId, task_id: before.id, [field]: date }))
    : await restWrite("PATCH", `/agents/${agentId}/tasks/${before.id}`, { [field]: date });
  return { outcome, before };
}

const caseOf = fc.record({
  parts: dateCase,
  field: fc.constantFrom<Field>("run_at", "deadline_at"),
  patch: fc.boolean(),
});

describe(`any date-time sent on ${testProvider}`, () => {
  it(`is refused with 400 naming its field, or stored and read back alike (${batches * batchSize} dates, REST and tRPC)`, async () => {
    let tried = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(caseOf, { minLength: batchSize, maxLength: batchSize }), async (cases) => {
        const agent = await createAgent(app, { name: "dated" });
        const head = await eventLogHead(app.database.db);
        /** Every task of the batch with the dates it must now have. */
        const expected = new Map<string, Dates>();
        for (const [index, { parts, field, patch }] of cases.entries()) {
          const date = dateString(parts);
          const instant = expectedInstant(parts);
          const trpc = index % 2 === 1;
          const { outcome, before } = await write(agent.id, field, patch, trpc, date);
          const label = `${trpc ? "tRPC" : "REST"} ${patch ? "PATCH" : "POST"} ${field}=${date}`;
          if (before) expected.set(before.id, datesOf(before));
          if (instant === undefined) {
            expect(outcome, label).toEqual({ refused: [field] });
          } else {
            expect("task" in outcome && outcome.task[field], label).toBe(instant);
            if ("task" in outcome) expected.set(outcome.task.id, datesOf(outcome.task));
          }
          tried++;
        }

        for (const [id, dates] of expected) {
          const got = await send<TaskOut>(app, "GET", `/agents/${agent.id}/tasks/${id}`);
          expect(got.status).toBe(200);
          expect(datesOf(got.body)).toEqual(dates);
        }
        const viaTrpc = await client.tasks.list.query({ agent_id: agent.id, limit: 1000 });
        const list = await send<TaskOut[]>(app, "GET", `/agents/${agent.id}/tasks?limit=1000`);
        expect(list.status).toBe(200);
        expect(new Map(list.body.map((task) => [task.id, datesOf(task)]))).toEqual(expected);
        expect(viaTrpc.items.map((task) => task.id)).toEqual(list.body.map((task) => task.id));

        // The events of the batch (a passed deadline's settlement among them): each task's last one has its dates.
        const page = await send<EventOut[]>(app, "GET", `/events?after=${head}&agent_id=${agent.id}&limit=1000`);
        expect(page.status).toBe(200);
        const lastDates = (events: EventOut[]) =>
          new Map(events.filter((e) => e.task_id !== null).map((e) => [e.task_id, datesOf(e.data.task as TaskOut)]));
        expect(lastDates(page.body)).toEqual(expected);
        const stream = await openStream(`${app.baseUrl}/events/stream?after=${head}&agent_id=${agent.id}`);
        try {
          expect(stream.status).toBe(200);
          const streamed = (await stream.until(page.body.length, isEvent)).slice(0, page.body.length);
          expect(streamed.map((message) => JSON.parse(message.data ?? ""))).toEqual(page.body);
        } finally {
          stream.close();
        }
      }),
      { numRuns: batches },
    );
    expect(tried).toBeGreaterThanOrEqual(2000);
    // 2,250 dates through every read path take 30 s alone, and twice that beside the process tests.
  }, 180_000);
});
