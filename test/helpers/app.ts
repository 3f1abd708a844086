import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { inject } from "vitest";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { startSettler } from "../../src/modules/leases/settler.js";
import { startScheduler } from "../../src/modules/schedules/scheduler.js";
import { createTestDatabase, type TestDatabase } from "./databases.js";

export interface TestApp {
  baseUrl: string;
  database: TestDatabase;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  /** fetch against the app: `app.request("/agents", { method: "POST", json: {...} })`. */
  request: (path: string, init?: RequestInit & { json?: unknown }) => Promise<Response>;
  close: () => Promise<void>;
}

export interface TestAppOptions {
  /** Start from a copy of the database that already holds the sample data (data/sample/sg). */
  sampleData?: boolean;
}

/**
 * The service's config for an app in a test, on `database`. Shedding on
 * event-loop lag, and on a short wait for a slot, is off unless a test sets
 * it: the machines tests run on are shared and often loaded, and a lagging
 * test process would shed requests its test expects answered.
 */
export function testConfig(env: Record<string, string>, database: TestDatabase) {
  return loadConfig({
    SEED_SAMPLE_DATA: "false",
    MAX_EVENT_LOOP_DELAY_MS: "600000",
    MAX_QUEUE_MS: "10000",
    ...env,
    DATABASE_URL: database.url,
  });
}

/**
 * The wait for a slot as the service runs by default, for the tests of what
 * admission refuses. Shedding on event-loop lag stays off even there: it
 * refuses whenever this machine cannot turn the loop within
 * MAX_EVENT_LOOP_DELAY_MS, which a loaded machine running other tests beside
 * them does (6 of 813 creates answered 503 beside 10 busy processes, none
 * with it off). The chaos suite checks the same loads with every production
 * setting, the machine to itself.
 */
export function productionQueueSettings(): Record<string, string> {
  const { load } = loadConfig({ DATABASE_URL: "file:unused.db" });
  return { MAX_QUEUE_MS: String(load.maxQueueMs) };
}

/**
 * `testConfig`, or the refusal thrown once `database` is dropped: a test may
 * start an app with settings the service refuses, and its database must not
 * outlive the refusal.
 */
export async function configOrDrop(env: Record<string, string>, database: TestDatabase) {
  try {
    return testConfig(env, database);
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** fetch against `baseUrl`; a `json` body is sent as JSON. */
export function requestTo(baseUrl: string): TestApp["request"] {
  return (path, { json, headers, ...init } = {}) =>
    fetch(`${baseUrl}${path}`, {
      ...init,
      headers: json === undefined ? headers : { "content-type": "application/json", ...headers },
      body: json === undefined ? init.body : JSON.stringify(json),
    });
}

/** A logger at info whose lines land, parsed, in `logs`. */
export function capturingLogger() {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split("\n").filter(Boolean)) logs.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: createLogger("info", sink), logs };
}

/** The real app on its own fresh database, listening on a free port. */
export async function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase(inject(options.sampleData ? "dataTemplateDatabase" : "templateDatabase"));
  const config = await configOrDrop(env, database);
  const { logger, logs } = capturingLogger();
  const shutdown = new AbortController();
  // Expired leases and passed deadlines are settled as in the service (docs/api/leases.md).
  const settler = startSettler({ db: database.db, policy: config.taskRetry, logger });
  // Schedules create their tasks as in the service (docs/api/schedules.md).
  const scheduler = startScheduler({ db: database.db, logger });
  const server = createServer(createApp({ db: database.db, config, logger, shutdown: shutdown.signal })).listen(
    0,
    "127.0.0.1",
  );
  await new Promise((resolve) => server.once("listening", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    database,
    logs,
    request: requestTo(baseUrl),
    close: async () => {
      shutdown.abort();
      await settler.stop();
      await scheduler.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await database.drop();
    },
  };
}
