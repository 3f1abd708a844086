import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, inject } from "vitest";
import { createTestDatabase, type TestDatabase } from "./databases.js";
import { followStart } from "./spawn.js";

const projectRoot = new URL("../..", import.meta.url).pathname;

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  exited: Promise<number | null>;
  output: () => { stdout: string; stderr: string };
  /** SIGKILL, and wait for the process to be gone. */
  kill: () => Promise<void>;
}

/** The service as `npm run dev` runs it (src/main.ts), on a free port, its log on stdout. */
export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: projectRoot,
    // No shedding on event-loop lag (see ./app.ts).
    env: {
      ...process.env,
      PORT: "0",
      LOG_LEVEL: "info",
      SEED_SAMPLE_DATA: "false",
      MAX_EVENT_LOOP_DELAY_MS: "600000",
      MAX_QUEUE_MS: "10000",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const { exited, port, output } = followStart(child);
  return {
    child,
    baseUrl: `http://127.0.0.1:${await port}`,
    exited,
    output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * For a file of tests on service processes: a fresh database before its tests,
 * and `start`, which runs the service on it with `settings` and then `env`.
 * After the file, every service started is killed and the database dropped.
 */
export function servicesOnTestDatabase(settings: Record<string, string> = {}) {
  let database: TestDatabase | undefined;
  const services: ServiceProcess[] = [];
  beforeAll(async () => {
    database = await createTestDatabase(inject("templateDatabase"));
  });
  afterAll(async () => {
    for (const service of services) await service.kill();
    await database?.drop();
  });
  const created = () => {
    if (!database) throw new Error("the database is created before the file's tests");
    return database;
  };
  return {
    database: created,
    start: async (env: Record<string, string> = {}) => {
      const service = await startService({ DATABASE_URL: created().url, ...settings, ...env });
      services.push(service);
      return service;
    },
  };
}

/** A request to a service process: status and parsed body (undefined for an empty one). */
export async function call<T = unknown>(baseUrl: string, method: string, path: string, json?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: json === undefined ? undefined : { "content-type": "application/json" },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  return { status: res.status, body: (text === "" ? undefined : JSON.parse(text)) as T, at: Date.now() };
}
