import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectDatabase, type Database, isDatabaseUnavailable, sqlitePath, statement } from "../src/db/index.js";
import { agentsService } from "../src/modules/agents/service.js";
import { agentStatements } from "../src/modules/agents/sql.js";
import { eventsChannel, recordEvents } from "../src/modules/events/outbox.js";
import { tasksService } from "../src/modules/tasks/service.js";
import { deliveriesChannel, feedChannel } from "../src/modules/webhooks/sql.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { createTestDatabase, type TestDatabase, testProvider } from "./helpers/databases.js";

let database: TestDatabase;
let db: Database;
beforeAll(async () => {
  database = await createTestDatabase(inject("templateDatabase"));
  db = database.db;
});
afterAll(() => database.drop());

const taskValues = statement<
  { id: string; priority: number; created_at: string; cancel_requested: boolean; description: string | null },
  [id: string]
>("test_task_values", "SELECT id, priority, created_at, cancel_requested, description FROM tasks WHERE id = $1");
const agentNames = statement<{ name: string }>("test_agent_names", "SELECT name FROM agents ORDER BY created_at, id");
const insertAgent = statement<unknown, [id: string, name: string, at: Date]>(
  "test_insert_agent",
  `INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at)
   VALUES ($1, '00000000-0000-4000-8000-000000000000', $2, 'worker', 'idle', $3, $3)`,
);
const agentCount = statement<{ n: number }>("test_agent_count", "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM agents");

describe("statements", () => {
  it("give rows keyed by column name, with the same value types on both databases", async () => {
    const agent = await agentsService.create(db, defaultProjectId, { name: "typed", type: "worker" });
    const task = await tasksService.create(db, defaultProjectId, agent.id, {
      title: "t",
      priority: 3,
    });
    expect(await db.get(taskValues, [task.id])).toEqual({
      id: task.id,
      priority: 3,
      created_at: task.created_at,
      cancel_requested: false,
      description: null,
    });
    expect(await db.get(taskValues, [randomUUID()])).toBeUndefined();
  });

  it("store timestamps as Prisma does: each reads the other's, and they sort together", async () => {
    const early = new Date("2001-01-01T00:00:00.001Z");
    const id = randomUUID();
    await db.run(insertAgent, [id, "by statement", early]);
    const row = await db.prisma.agent.findUniqueOrThrow({ where: { id } });
    expect(row.createdAt.toISOString()).toBe(early.toISOString());
    const byPrisma = await db.prisma.agent.create({
      data: {
        name: "by prisma",
        type: "worker",
        projectId: defaultProjectId,
        createdAt: new Date("2001-01-01T00:00:00.002Z"),
      },
    });
    expect((await agentsService.get(db, defaultProjectId, byPrisma.id)).created_at).toBe("2001-01-01T00:00:00.002Z");
    const names = (await db.all(agentNames, [])).map((r) => r.name);
    expect(names.slice(0, 2)).toEqual(["by statement", "by prisma"]);
  });

  it.runIf(testProvider === "postgresql")("are prepared once per connection, by name", async () => {
    const prepared = statement<{ name: string }>("test_prepared", "SELECT name FROM pg_prepared_statements");
    const names = await db.transaction(async (tx) => {
      await tx.get(agentStatements.get, [randomUUID(), defaultProjectId]);
      await tx.get(agentStatements.get, [randomUUID(), defaultProjectId]);
      return (await tx.all(prepared, [])).map((row) => row.name);
    });
    expect(names).toContain("agents_get");
  });
});

describe("transactions", () => {
  it("commit all their statements or none", async () => {
    const before = (await db.get(agentCount, []))?.n;
    const failure = new Error("no");
    await expect(
      db.transaction(async (tx) => {
        await tx.run(insertAgent, [randomUUID(), "rolled back", new Date()]);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect((await db.get(agentCount, []))?.n).toBe(before);
  });

  it.runIf(testProvider === "sqlite")(
    "queue in a process: nothing runs inside an open one, and reads do not wait for it",
    async () => {
      const steps: string[] = [];
      const before = (await db.get(agentCount, []))?.n as number;
      const first = db.transaction(async (tx) => {
        await tx.run(insertAgent, [randomUUID(), "first", new Date()]);
        steps.push("first wrote");
        // A real pause, which a transaction should never take: other work gets the event loop.
        await sleep(50);
        steps.push("first ends");
      });
      await sleep(10);
      const second = db.transaction(async (tx) => {
        steps.push("second starts");
        await tx.run(insertAgent, [randomUUID(), "second", new Date()]);
      });
      expect((await db.get(agentCount, []))?.n).toBe(before);
      steps.push("read done");
      await Promise.all([first, second]);
      expect(steps).toEqual(["first wrote", "read done", "first ends", "second starts"]);
      expect((await db.get(agentCount, []))?.n).toBe(before + 2);
    },
  );

  it.runIf(testProvider === "sqlite")(
    "asked for together share one commit, each in a savepoint: one that fails rolls back alone",
    async () => {
      const before = (await db.get(agentCount, []))?.n as number;
      const [a, c] = [randomUUID(), randomUUID()];
      const seenWhenFirstResolved: number[] = [];
      const failure = new Error("second fails");
      const first = db
        .transaction(async (tx) => {
          await tx.run(insertAgent, [a, "first of three", new Date()]);
          return recordEvents(tx, defaultProjectId, [
            { type: "agent.created", agentId: a, data: { agent: {} as never } },
          ]);
        })
        .then(async (ids) => {
          // The third's row is already there: it committed with the first.
          seenWhenFirstResolved.push((await db.get(agentCount, []))?.n as number);
          return ids;
        });
      const second = db.transaction(async (tx) => {
        await tx.run(insertAgent, [randomUUID(), "second of three", new Date()]);
        await recordEvents(tx, defaultProjectId, [{ type: "agent.created", agentId: a, data: { agent: {} as never } }]);
        throw failure;
      });
      const third = db.transaction(async (tx) => {
        await tx.run(insertAgent, [c, "third of three", new Date()]);
        return recordEvents(tx, defaultProjectId, [
          { type: "agent.created", agentId: c, data: { agent: {} as never } },
        ]);
      });
      const [firstIds, secondError, thirdIds] = await Promise.all([first, second.catch((e: unknown) => e), third]);
      expect(seenWhenFirstResolved).toEqual([before + 2]);
      expect(secondError).toBe(failure);
      expect((await db.get(agentCount, []))?.n).toBe(before + 2);
      expect((await db.all(agentNames, [])).map((row) => row.name)).not.toContain("second of three");
      // The second's event id went back with its savepoint: the third's follows the first's.
      expect(thirdIds).toEqual([(firstIds[0] as bigint) + 1n]);
    },
  );

  it.runIf(testProvider === "sqlite")(
    "asked for together, when one ends the whole transaction: what ran before it fails, what follows commits",
    async () => {
      const before = (await db.get(agentCount, []))?.n as number;
      const endAll = statement("test_rollback_all", { sqlite: "ROLLBACK" });
      const failure = new Error("ended everything");
      const outcomes = await Promise.allSettled([
        db.transaction((tx) => tx.run(insertAgent, [randomUUID(), "lost with the transaction", new Date()])),
        db.transaction(async (tx) => {
          await tx.run(endAll, []);
          throw failure;
        }),
        db.transaction((tx) => tx.run(insertAgent, [randomUUID(), "after the end", new Date()])),
      ]);
      expect(outcomes).toEqual([
        { status: "rejected", reason: failure },
        { status: "rejected", reason: failure },
        { status: "fulfilled", value: 1 },
      ]);
      expect((await db.get(agentCount, []))?.n).toBe(before + 1);
      const names = (await db.all(agentNames, [])).map((row) => row.name);
      expect(names).toContain("after the end");
      expect(names).not.toContain("lost with the transaction");
    },
  );

  it.runIf(testProvider === "sqlite")(
    "asked for together, when their shared commit fails: every one fails and none wrote anything",
    async () => {
      const before = (await db.get(agentCount, []))?.n as number;
      // A foreign key checked at COMMIT, not at the insert: the commit is what fails.
      const deferForeignKeys = statement("test_defer_foreign_keys", { sqlite: "PRAGMA defer_foreign_keys = ON" });
      const orphanPair = statement<unknown, [agentId: string]>("test_orphan_metadata", {
        sqlite: `INSERT INTO agent_metadata (agent_id, project_id, key, value, created_at)
          VALUES ($1, '00000000-0000-4000-8000-000000000000', 'k', 'v', 0)`,
      });
      const outcomes = await Promise.allSettled([
        db.transaction((tx) => tx.run(insertAgent, [randomUUID(), "lost with the commit", new Date()])),
        db.transaction(async (tx) => {
          await tx.run(deferForeignKeys, []);
          return tx.run(orphanPair, [randomUUID()]);
        }),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
      for (const outcome of outcomes) {
        expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_CONSTRAINT_FOREIGNKEY" });
      }
      expect((await db.get(agentCount, []))?.n).toBe(before);
      // The write connection is usable again.
      await db.transaction((tx) => tx.run(insertAgent, [randomUUID(), "after the failed commit", new Date()]));
      expect((await db.get(agentCount, []))?.n).toBe(before + 1);
    },
  );

  it.runIf(testProvider === "sqlite")(
    "wait for another connection's write lock without blocking the process, and give up after 5 s as unavailable",
    async () => {
      const other = new BetterSqlite3(sqlitePath(database.url));
      other.exec("BEGIN IMMEDIATE");
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      try {
        const waiting = db.transaction((tx) => tx.run(insertAgent, [randomUUID(), "waited", new Date()]));
        await sleep(200);
        expect(ticks).toBeGreaterThan(5);
        other.exec("COMMIT");
        await waiting;

        other.exec("BEGIN IMMEDIATE");
        const error = await db
          .transaction((tx) => tx.run(insertAgent, [randomUUID(), "never", new Date()]))
          .catch((e: unknown) => e);
        expect(isDatabaseUnavailable(error)).toBe(true);
        other.exec("ROLLBACK");
      } finally {
        clearInterval(ticker);
        other.close();
      }
    },
    15_000,
  );
});

describe.runIf(testProvider === "postgresql")("a connection the server ends while a transaction holds it", () => {
  const backendPid = statement<{ pid: number }>("test_backend_pid", "SELECT pg_backend_pid() AS pid");
  const terminate = statement<unknown, [pid: number]>("test_terminate", "SELECT pg_terminate_backend($1)");
  const backend = statement<unknown, [pid: number]>("test_backend", "SELECT 1 FROM pg_stat_activity WHERE pid = $1");

  it("fails that transaction as unavailable, does not end the process, and the pool goes on", async () => {
    const error = await db
      .transaction(async (tx) => {
        const pid = (await tx.get(backendPid, []))?.pid as number;
        // Ended from another connection while this one sits between two statements: no query to fail. Once
        // its backend is gone, the server's last message to it has been sent.
        await db.run(terminate, [pid]);
        while (await db.get(backend, [pid])) await sleep(10);
        await tx.run(insertAgent, [randomUUID(), "never", new Date()]);
      })
      .catch((e: unknown) => e);
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect((await db.all(agentNames, [])).map((row) => row.name)).not.toContain("never");
  });
});

/** Sends `payload` until a listener of `channel` has it, so the listener is known to be connected. */
async function untilHeard(sender: Database, channel: string, heard: string[], payload: string) {
  const deadline = Date.now() + 5_000;
  while (!heard.includes(payload)) {
    if (Date.now() > deadline) throw new Error(`${payload} never arrived`);
    await sender.notify(channel, payload);
    await sleep(50);
  }
}

async function waitFor(condition: () => boolean, ms: number) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(5);
  }
  return true;
}

describe("notify and listen", () => {
  it("a notification sent in a transaction arrives after its commit, never after a rollback", async () => {
    const heard: string[] = [];
    const stop = db.listen("test_tx", (payload) => heard.push(payload));
    try {
      await untilHeard(db, "test_tx", heard, "ready");
      await db
        .transaction(async (tx) => {
          await db.notify("test_tx", "rolled back", tx);
          throw new Error("rollback");
        })
        .catch(() => {});
      let committed = false;
      await db.transaction(async (tx) => {
        await tx.notify("test_tx", "committed");
        await sleep(100);
        expect(heard).not.toContain("committed");
        committed = true;
      });
      expect(committed).toBe(true);
      expect(await waitFor(() => heard.includes("committed"), 1_000)).toBe(true);
      expect(heard).not.toContain("rolled back");
    } finally {
      stop();
    }
  });

  it("another instance's commit wakes this instance's listeners within 1 s", async () => {
    const other = await connectDatabase(database.url);
    const heard: string[] = [];
    const stop = other.listen("events", (payload) => heard.push(payload));
    try {
      await untilHeard(other, "events", heard, "ready");
      heard.length = 0;
      const agent = await agentsService.create(db, defaultProjectId, {
        name: "seen elsewhere",
        type: "worker",
      });
      // SQLite cannot say which agent another process changed: its listeners are woken with "".
      const expected = testProvider === "postgresql" ? agent.id : "";
      expect(await waitFor(() => heard.includes(expected), 1_000)).toBe(true);
    } finally {
      stop();
      await other.close();
    }
  });

  // The webhook deliverer starts listening to three channels in one tick, often
  // after the events channel has connected the listener.
  it.runIf(testProvider === "postgresql")(
    "channels that gain listeners at once are each woken, with one command at a time on the connection",
    async () => {
      const other = await connectDatabase(database.url);
      const warnings: Error[] = [];
      const onWarning = (warning: Error) => warnings.push(warning);
      process.on("warning", onWarning);
      const heard: string[] = [];
      const stops = [other.listen(eventsChannel, (payload) => heard.push(payload))];
      try {
        await untilHeard(other, eventsChannel, heard, "ready");
        const woken = new Set<string>();
        for (const channel of [feedChannel, deliveriesChannel, "test_at_once_a", "test_at_once_b"]) {
          stops.push(other.listen(channel, (payload) => payload === "" && woken.add(channel)));
        }
        expect(await waitFor(() => woken.size === 4, 5_000)).toBe(true);
        // Warnings are emitted on a later tick.
        await sleep(10);
        expect(warnings.map((warning) => warning.message)).not.toContainEqual(
          expect.stringContaining("already executing a query"),
        );
      } finally {
        process.off("warning", onWarning);
        for (const stop of stops) stop();
        await other.close();
      }
    },
  );
});
