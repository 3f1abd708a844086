import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { documentedCommands, root, titledSnippets } from "./helpers/doc-snippets.js";

// The client examples and the docs' snippets, run as a reader would run them.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({}, { sampleData: true });
});
afterAll(() => app.close());

const execute = promisify(execFile);
const bin = (name: string) => join(root, "node_modules", ".bin", name);
const documentedServer = "http://127.0.0.1:8000";
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Runs an example with tsx against the test server; its output as [label, rest] per line. */
async function runExample(file: string): Promise<[string, string][]> {
  const { stdout } = await execute(bin("tsx"), [file], { cwd: root, env: { ...process.env, API_URL: app.baseUrl } });
  return stdout
    .trimEnd()
    .split("\n")
    .map((line) => {
      const space = line.indexOf(" ");
      return [line.slice(0, space), line.slice(space + 1)];
    });
}

/** tsc's report on the files of `dir` (none when they type-check), with the project's compiler options. */
async function typeCheck(dir: string, files: string[]): Promise<string> {
  const tsconfig = join(dir, "tsconfig.json");
  writeFileSync(tsconfig, JSON.stringify({ extends: join(root, "tsconfig.json"), include: files }));
  const result = await execute(bin("tsc"), ["--noEmit", "-p", tsconfig]).catch((error: { stdout: string }) => error);
  return result.stdout;
}

describe("the docs' snippets", () => {
  it("are exactly the files they name, and every example is shown", () => {
    const snippets = titledSnippets();
    for (const { doc, file, code } of snippets) {
      expect(code, `${doc}: the snippet of ${file}`).toBe(readFileSync(join(root, file), "utf8"));
    }
    const shown = new Set(snippets.map((snippet) => snippet.file));
    for (const example of readdirSync(join(root, "examples"))) expect(shown).toContain(`examples/${example}`);
  });
});

describe("the REST client example", { timeout: 120_000 }, () => {
  it("type-checks against types generated, as the docs say, from the served document", async () => {
    const commands = new Set(documentedCommands("npx openapi-typescript "));
    expect(commands.size).toBe(1);
    const [, , url, flag, output] = [...commands][0]?.split(" ") ?? [];
    expect([url, flag, output]).toEqual([`${documentedServer}/openapi.json`, "-o", "generated/openapi.ts"]);

    // A scratch copy of the example beside freshly generated types, inside the
    // project so that its imports resolve from node_modules.
    const scratch = join(root, "test-results", "rest-client");
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(join(scratch, "examples"), { recursive: true });
    copyFileSync(join(root, "examples/rest-client.ts"), join(scratch, "examples/rest-client.ts"));
    // Run where a client project would: away from this project's strict lint configuration.
    await execute(bin("openapi-typescript"), [`${app.baseUrl}/openapi.json`, "-o", join(scratch, output as string)], {
      cwd: scratch,
    });
    expect(readFileSync(join(scratch, output as string), "utf8")).toContain('"/agents/{agent_id}"');

    expect(await typeCheck(scratch, ["examples/rest-client.ts"])).toBe("");
  });

  it("creates, reads, lists, replaces and deletes an agent", async () => {
    const lines = await runExample("examples/rest-client.ts");
    expect(lines.map(([label]) => label)).toEqual([
      "created",
      "read",
      "listed",
      "total",
      "replaced",
      "deleted",
      "missing",
    ]);
    const [location, createdJson] = (lines[0]?.[1] ?? "").split(" ");
    const created = JSON.parse(createdJson as string) as { id: string };
    expect(created).toMatchObject({ id: expect.stringMatching(uuid), name: "Scout", type: "worker", status: "idle" });
    expect(location).toBe(`/agents/${created.id}`);
    expect(JSON.parse(lines[1]?.[1] as string)).toEqual(created);
    expect(JSON.parse(lines[2]?.[1] as string)).toEqual([created.id]);
    expect(lines[3]?.[1]).toBe("1");
    expect(JSON.parse(lines[4]?.[1] as string)).toMatchObject({ id: created.id, name: "Lead", type: "supervisor" });
    expect(lines[5]?.[1]).toBe("204");
    expect(lines[6]?.[1]).toBe('404 {"detail":"Agent not found"}');
    expect((await app.request(`/agents/${created.id}`)).status).toBe(404);
  });
});

describe("the tRPC client example", { timeout: 60_000 }, () => {
  it("creates, lists, replaces and deletes an agent", async () => {
    const lines = await runExample("examples/trpc-client.ts");
    expect(lines.map(([label]) => label)).toEqual([
      "created",
      "listed",
      "updated",
      "replaced",
      "deleted",
      "premiums",
      "missing",
      "invalid",
    ]);
    const created = JSON.parse(lines[0]?.[1] as string) as { id: string };
    expect(created).toMatchObject({ id: expect.stringMatching(uuid), name: "Scout", type: "worker", status: "idle" });
    expect(JSON.parse(lines[1]?.[1] as string)).toEqual([created.id]);
    expect(lines[2]?.[1]).toBe("running");
    expect(JSON.parse(lines[3]?.[1] as string)).toMatchObject({ id: created.id, name: "Lead", type: "supervisor" });
    expect(lines[4]?.[1]).toBe(created.id);
    // The sample's latest round: one row per category.
    expect((JSON.parse(lines[5]?.[1] as string) as [string, number][]).map(([category]) => category)).toEqual([
      "Category A",
      "Category B",
      "Category C",
      "Category D",
      "Category E",
    ]);
    expect(lines[6]?.[1]).toBe("404 NOT_FOUND Agent not found");
    expect(lines[7]?.[1]).toBe('validation_error [{"field":"name","message":"must have at least 1 character"}]');
    expect((await app.request(`/agents/${created.id}`)).status).toBe(404);
  });
});

describe("the worker example", { timeout: 90_000 }, () => {
  let workerApp: TestApp;
  beforeAll(async () => {
    workerApp = await startTestApp({ TASK_RETRY_BASE_SECONDS: "0.2" });
  });
  afterAll(() => workerApp.close());

  it("runs its agent's tasks: succeeds, retries a failure, stops when cancelled, then drains on SIGTERM", async () => {
    const post = async (path: string, json: unknown) =>
      (await (await workerApp.request(path, { method: "POST", json })).json()) as { id: string };
    const agent = await post("/agents", { name: "Runner", type: "worker" });
    await workerApp.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "running" } });
    const tasks = `/agents/${agent.id}/tasks`;
    const quick = await post(tasks, { title: "quick", priority: 9 });
    const flaky = await post(tasks, { title: "flaky", priority: 8, max_attempts: 3, input: { fail_first: 1 } });
    const slow = await post(tasks, { title: "slow", priority: 1, input: { ms: 60_000 } });

    const worker = spawn(bin("tsx"), ["examples/worker.ts"], {
      cwd: root,
      env: { ...process.env, API_URL: workerApp.baseUrl, AGENT_ID: agent.id, LEASE_SECONDS: "5" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const lines: string[] = [];
    const exited = once(worker, "exit");
    for await (const line of createInterface({ input: worker.stdout })) {
      lines.push(line);
      // The slow task is cancelled while it runs: its worker learns it at its next renewal.
      if (line.startsWith(`leased ${slow.id}`)) {
        const res = await workerApp.request(`${tasks}/${slow.id}`, { method: "PATCH", json: { status: "cancelled" } });
        expect(res.status).toBe(202);
      }
      // Every task is done: the worker waits in a long poll until it is told to stop.
      if (line.startsWith(`succeeded ${flaky.id}`)) worker.kill("SIGTERM");
    }
    expect(await exited).toEqual([0, null]);
    expect(lines.map((line) => line.split(" ").slice(0, 2).join(" "))).toEqual([
      `leased ${quick.id}`,
      `succeeded ${quick.id}`,
      `leased ${flaky.id}`,
      `failed ${flaky.id}`,
      // Ready at once, while the flaky task waits for its retry.
      `leased ${slow.id}`,
      `cancelled ${slow.id}`,
      `leased ${flaky.id}`,
      `succeeded ${flaky.id}`,
      "stopped",
    ]);
    expect(lines[3]).toMatch(/ retry at \d{4}-/);
    const read = async (id: string) => (await (await workerApp.request(`${tasks}/${id}`)).json()) as object;
    expect(await read(quick.id)).toMatchObject({
      status: "succeeded",
      attempts: 0,
      result: { done_at: expect.any(String) },
    });
    expect(await read(flaky.id)).toMatchObject({
      status: "succeeded",
      attempts: 1,
      error: { code: "handler_error", message: "attempt 1 failed", details: null },
    });
    expect(await read(slow.id)).toMatchObject({ status: "cancelled", cancel_requested: true, lease: null });
  });
});

describe("the watch example", { timeout: 90_000 }, () => {
  it("follows an agent's tasks live, resumes after a reconnect without a gap, and the same through tRPC", async () => {
    const post = async (path: string, json: unknown) =>
      (await (await app.request(path, { method: "POST", json })).json()) as { id: string };
    const agent = await post("/agents", { name: "Watched", type: "worker" });
    const tasks = `/agents/${agent.id}/tasks`;
    const watcher = spawn(bin("tsx"), ["examples/watch.ts"], {
      cwd: root,
      env: { ...process.env, API_URL: app.baseUrl, AGENT_ID: agent.id },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = once(watcher, "exit");
    const lines: string[] = [];
    const created: string[] = [];
    for await (const line of createInterface({ input: watcher.stdout })) {
      lines.push(line);
      if (line.startsWith("watching") && created.length === 0) created.push((await post(tasks, { title: "one" })).id);
      // Written while the watcher is between connections: the second one resumes before them.
      if (line.startsWith("reconnect")) {
        created.push((await post(tasks, { title: "two" })).id);
        created.push((await post(tasks, { title: "three" })).id);
      }
    }
    expect(await exited).toEqual([0, null]);
    const [one, two, three] = created;
    expect(lines).toEqual([
      `watching ${agent.id}`,
      `rest task.created ${one} pending`,
      expect.stringMatching(/^reconnect \d+$/),
      `watching ${agent.id}`,
      `rest task.created ${two} pending`,
      `rest task.created ${three} pending`,
      expect.stringMatching(new RegExp(`^trpc \\d+ task.created ${two}$`)),
      expect.stringMatching(new RegExp(`^trpc \\d+ task.created ${three}$`)),
    ]);
  });
});
