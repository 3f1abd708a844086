import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, testProvider } from "./helpers/databases.js";
import { type ServiceProcess, startService } from "./helpers/service.js";
import { run } from "./helpers/spawn.js";

// docs/operations.md: a start that cannot serve exits 1 with one line naming the
// cause and the setting; several processes share one database, whichever
// migrates it first.
const env = (extra: Record<string, string>) => ({
  ...process.env,
  PORT: "0",
  SEED_SAMPLE_DATA: "false",
  LOG_LEVEL: "info",
  ...extra,
});

/** The service run to its end (it must fail), as `npm run dev` runs it. */
const startToFailure = (extra: Record<string, string>) =>
  run(process.execPath, ["--import", "tsx", "src/main.ts"], env(extra));

/** The service's own line: the runner may print its own around it. */
const failureLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("Failed to start"));

function expectOneClearLine(done: { code: number | null; stdout: string; stderr: string }, line: string | RegExp) {
  expect(done.code, done.stderr).toBe(1);
  const lines = failureLines(done.stderr);
  expect(lines).toHaveLength(1);
  if (typeof line === "string") expect(lines[0]).toBe(line);
  else expect(lines[0]).toMatch(line);
  expect(done.stderr).not.toMatch(/^\s+at /m);
  expect(done.stderr).not.toMatch(/External error|WASM|SocketTimeout/);
  expect(done.stdout).not.toContain("listening");
}

let database: { url: string; drop: () => Promise<void> };
const services: ServiceProcess[] = [];
beforeAll(async () => {
  database = await createEmptyDatabase();
});
afterAll(async () => {
  await Promise.all(services.map((service) => service.kill()));
  await database.drop();
});

const ready = async (service: ServiceProcess) => (await fetch(`${service.baseUrl}/readyz`)).json();

describe("several processes on one database", () => {
  it("three started at once on a fresh database all serve; one of them migrated it", { timeout: 180_000 }, async () => {
    const started = await Promise.all([0, 1, 2].map(() => startService({ DATABASE_URL: database.url })));
    services.push(...started);
    for (const service of started) {
      expect(await ready(service)).toEqual({ status: "ready", database: "ok", migrations: "ok" });
      expect((await fetch(`${service.baseUrl}/agents`)).status).toBe(200);
    }
    const created = await fetch(`${started[0]?.baseUrl}/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Shared", type: "worker" }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await fetch(`${started[2]?.baseUrl}/agents/${id}`)).status).toBe(200);
  });

  it("npm run db:migrate while they run: nothing to do, nothing broken", { timeout: 120_000 }, async () => {
    const done = await run("npm", ["run", "--silent", "db:migrate"], env({ DATABASE_URL: database.url }));
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/^The database is up to date \(\d+ migrations\)\.$/m);
    for (const service of services) expect((await fetch(`${service.baseUrl}/agents`)).status).toBe(200);
  });

  it("a port in use: exit 1, one line naming PORT", { timeout: 120_000 }, async () => {
    const port = new URL(services[0]?.baseUrl ?? "").port;
    const done = await startToFailure({ DATABASE_URL: database.url, PORT: port });
    expectOneClearLine(done, `Failed to start: port ${port} on 127.0.0.1 is already in use (PORT)`);
  });
});

describe("a database the service cannot use", () => {
  it.runIf(testProvider === "sqlite")(
    "a SQLite path it cannot write: exit 1, one line",
    { timeout: 120_000 },
    async () => {
      const done = await startToFailure({ DATABASE_URL: "file:/proc/agents-cannot-be-here.db" });
      expectOneClearLine(
        done,
        "Failed to start: cannot use the SQLite database /proc/agents-cannot-be-here.db (DATABASE_URL): cannot open or create the file (does its folder exist and is it writable?)",
      );
    },
  );

  it.runIf(testProvider === "sqlite")(
    "a SQLite folder that cannot be made (under /proc): exit 1, one line, no hang",
    { timeout: 120_000 },
    async () => {
      const started = Date.now();
      const done = await startToFailure({ DATABASE_URL: "file:/proc/x/agents.db" });
      expectOneClearLine(
        done,
        /^Failed to start: cannot use the SQLite database \/proc\/x\/agents\.db \(DATABASE_URL\): /,
      );
      // A guard against the hang (Node's recursive mkdir loops under /proc), not a measure of speed.
      expect(Date.now() - started).toBeLessThan(30_000);
    },
  );

  it("a PostgreSQL server that never answers: exit 1 within the connect timeout", { timeout: 120_000 }, async () => {
    const started = performance.now();
    const done = await startToFailure({ DATABASE_URL: "postgresql://postgres:secret@10.255.255.1:5432/agents" });
    expectOneClearLine(
      done,
      "Failed to start: cannot use the PostgreSQL database 10.255.255.1:5432/agents (DATABASE_URL): no answer within 5 s",
    );
    expect(done.stderr).not.toContain("secret");
    // The 5 s connect timeout, plus the process's own start on a loaded machine.
    expect(performance.now() - started).toBeLessThan(60_000);
  });

  it("a PostgreSQL port nothing listens on: connection refused", { timeout: 120_000 }, async () => {
    const done = await startToFailure({ DATABASE_URL: "postgresql://postgres@127.0.0.1:1/agents" });
    expectOneClearLine(
      done,
      "Failed to start: cannot use the PostgreSQL database 127.0.0.1:1/agents (DATABASE_URL): connection refused (is the server running?)",
    );
  });

  it("a PostgreSQL database that does not exist", { timeout: 120_000 }, async () => {
    const done = await startToFailure({
      DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/no_such_database_at_start",
    });
    expectOneClearLine(
      done,
      'Failed to start: cannot use the PostgreSQL database 127.0.0.1:5432/no_such_database_at_start (DATABASE_URL): database "no_such_database_at_start" does not exist',
    );
  });
});
