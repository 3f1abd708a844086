// WEB_CONCURRENCY=2: the real entry point as a process, two workers on one
// port, and a clean exit 0 on SIGTERM to the primary.
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./helpers/databases.js";
import { sendRaw } from "./helpers/raw-http.js";

let database: TestDatabase;
let primary: ChildProcess;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  database = await createTestDatabase(inject("templateDatabase"));
  primary = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { ...process.env, DATABASE_URL: database.url, PORT: "0", WEB_CONCURRENCY: "2", SEED_SAMPLE_DATA: "false" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let buffered = "";
  primary.stdout?.on("data", (chunk) => {
    buffered += chunk;
    const complete = buffered.split("\n");
    buffered = complete.pop() ?? "";
    for (const line of complete.filter(Boolean)) lines.push(JSON.parse(line));
  });
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (lines.filter((line) => line.msg?.toString().startsWith("listening")).length === 2) {
        clearInterval(poll);
        resolve();
      }
    }, 50);
    primary.once("exit", (code) => reject(new Error(`exited early with ${code}`)));
  });
}, 60_000);
afterAll(async () => {
  if (primary.exitCode === null) primary.kill("SIGKILL");
  await database.drop();
});

const baseUrl = () => `http://127.0.0.1:${lines.find((line) => line.port)?.port}`;

describe("WEB_CONCURRENCY=2", () => {
  it("answers request targets that are not a path with 400, and no worker dies of them", async () => {
    // Fresh connections, so both workers get some; before, one such request ended a worker and the primary.
    for (let i = 0; i < 6; i++) {
      for (const line of ["OPTIONS * HTTP/1.1", "GET http://localhost:99999/agents HTTP/1.1"]) {
        const res = await sendRaw(baseUrl(), `${line}\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
        expect(res.status, line).toBe(400);
      }
    }
    expect((await fetch(`${baseUrl()}/agents`)).status).toBe(200);
    expect(primary.exitCode).toBeNull();
    expect(lines.filter((line) => line.msg === "worker exited unexpectedly")).toEqual([]);
  });

  it("serves from two workers on one port and exits 0 on SIGTERM", async () => {
    const ports = new Set(lines.filter((line) => line.port).map((line) => line.port));
    expect(ports.size).toBe(1);
    expect(lines.filter((line) => line.msg?.toString().startsWith("listening"))).toHaveLength(2);
    const base = `http://127.0.0.1:${[...ports][0]}`;

    const created = await fetch(`${base}/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "clustered", type: "worker" }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    // Fresh connections, so the primary hands them to either worker: each sees the shared database.
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${base}/agents/${id}`, { headers: { connection: "close" } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { name: string }).name).toBe("clustered");
    }

    const exited = new Promise<number | null>((resolve) => primary.once("exit", (code) => resolve(code)));
    primary.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(lines.filter((line) => line.msg === "stopped")).toHaveLength(3);
  }, 30_000);
});
