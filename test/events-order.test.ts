import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectDatabase, type Database } from "../src/db/index.js";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import { agentsService } from "../src/modules/agents/service.js";
import { recordEvents } from "../src/modules/events/outbox.js";
import { eventLogHead, readEvents } from "../src/modules/events/sql.js";
import { tasksService } from "../src/modules/tasks/service.js";
import { defaultProjectId, systemActing } from "../src/resources/acting.js";
import { createTestDatabase, postgresAdminUrl, type TestDatabase, testProvider } from "./helpers/databases.js";

// The reader and two writers each have their own connections (on PostgreSQL,
// their own pools), as separate processes would.
let database: TestDatabase;
let writers: Database[];
beforeAll(async () => {
  database = await createTestDatabase(inject("templateDatabase"));
  writers = [await connectDatabase(database.url), await connectDatabase(database.url)];
});
afterAll(async () => {
  for (const writer of writers) await writer.close();
  await database.drop();
});

const allIds = async () =>
  (await database.db.prisma.event.findMany({ select: { id: true }, orderBy: { id: "asc" } })).map((e) => e.id);

/** A stand-in agent for events recorded directly. */
const agentData = (id: string): { agent: AgentOut } => ({
  agent: {
    id,
    name: "direct",
    type: "worker",
    status: "idle",
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
    version: 1,
    metadata: {},
    concurrency: { max_running: null, max_running_per_key: null },
  },
});

describe(`the event log on ${testProvider}`, () => {
  it("a reader following with `after` sees every event of concurrent writers exactly once, in increasing order", async () => {
    const seen: bigint[] = [];
    let writing = true;
    const reader = (async () => {
      let after = 0n;
      for (;;) {
        const last = !writing;
        const page = await readEvents(database.db, { projectId: defaultProjectId, after, limit: 100 });
        seen.push(...page.map((event) => event.id));
        after = page.at(-1)?.id ?? after;
        if (last && page.length < 100) return;
        if (page.length === 0) await sleep(1);
      }
    })();
    const work = async (db: Database, i: number) => {
      const agent = await agentsService.create(db, defaultProjectId, { name: `writer ${i}`, type: "worker" });
      await agentsService.update(db, defaultProjectId, agent.id, { status: "running" });
      const task = await tasksService.create(db, defaultProjectId, agent.id, { title: `task ${i}`, priority: 5 });
      await tasksService.update(db, defaultProjectId, agent.id, task.id, { status: "running" });
      await agentsService.update(db, defaultProjectId, agent.id, { name: `writer ${i} again` });
      if (i % 2 === 1) await agentsService.remove(db, systemActing(defaultProjectId), agent.id);
    };
    try {
      await Promise.all(Array.from({ length: 50 }, (_, i) => work(writers[i % 2] as Database, i)));
    } finally {
      writing = false;
      await reader;
    }

    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1] as bigint);
    expect(seen).toEqual(await allIds());
    // 5 writes each, plus a task.deleted and an agent.deleted for every other writer.
    expect(seen).toHaveLength(50 * 5 + 25 * 2);
  });

  it("a transaction that fails records no event", async () => {
    const head = await eventLogHead(database.db);
    const failure = new Error("the change failed");
    await expect(
      writers[0]?.transaction(async (tx) => {
        const agentId = randomUUID();
        await recordEvents(tx, defaultProjectId, [{ type: "agent.created", agentId, data: agentData(agentId) }]);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await readEvents(database.db, { projectId: defaultProjectId, after: head })).toEqual([]);
    const agent = await agentsService.create(writers[0] as Database, defaultProjectId, {
      name: "after the failure",
      type: "worker",
    });
    expect(
      (await readEvents(database.db, { projectId: defaultProjectId, after: head })).map((event) => event.agent_id),
    ).toEqual([agent.id]);
  });

  it.runIf(testProvider === "postgresql")(
    "an event committed after an older transaction's stays unseen until that transaction ends",
    async () => {
      const head = await eventLogHead(database.db);
      const olderId = randomUUID();
      let recorded!: () => void;
      let release!: () => void;
      const inside = new Promise<void>((resolve) => {
        recorded = resolve;
      });
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const older = writers[0]?.transaction(async (tx) => {
        await recordEvents(tx, defaultProjectId, [
          { type: "agent.created", agentId: olderId, data: agentData(olderId) },
        ]);
        recorded();
        await held;
      });
      await inside;
      const newer = await agentsService.create(writers[1] as Database, defaultProjectId, {
        name: "newer",
        type: "worker",
      });
      // Committed, but a reader that took it now could later see the older transaction's smaller id.
      expect(await readEvents(database.db, { projectId: defaultProjectId, after: head })).toEqual([]);
      release();
      await older;
      const events = await readEvents(database.db, { projectId: defaultProjectId, after: head });
      expect(events.map((event) => event.agent_id)).toEqual([olderId, newer.id]);
      expect(events[1]?.id).toBeGreaterThan(events[0]?.id as bigint);
    },
  );

  it.runIf(testProvider === "postgresql")(
    "a transaction running in another database of the cluster holds no reader back",
    async () => {
      const head = await eventLogHead(database.db);
      const elsewhere = new pg.Client({ connectionString: postgresAdminUrl });
      await elsewhere.connect();
      try {
        await elsewhere.query("BEGIN");
        // Taking a transaction id puts it in every snapshot's list of running transactions.
        await elsewhere.query("SELECT pg_current_xact_id()");
        const agent = await agentsService.create(writers[0] as Database, defaultProjectId, {
          name: "meanwhile",
          type: "worker",
        });
        const events = await readEvents(database.db, { projectId: defaultProjectId, after: head });
        expect(events.map((event) => [event.type, event.agent_id])).toEqual([["agent.created", agent.id]]);
      } finally {
        await elsewhere.query("ROLLBACK");
        await elsewhere.end();
      }
    },
  );
});
