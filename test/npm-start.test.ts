import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, readFileSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./helpers/databases.js";
import { copyProject, type ProjectCopy } from "./helpers/project-copy.js";
import { followStart } from "./helpers/spawn.js";

// docs/operations.md: `npm start` on a built tree answers within 3 seconds; it builds
// only when the sources (the service's, or the SDK's in packages/sdk) changed since the last build.
const startBudgetMs = 3000;

let project: ProjectCopy;
let database: TestDatabase;
const running = new Set<ChildProcess>();

beforeAll(async () => {
  project = copyProject();
  database = await createTestDatabase(inject("templateDatabase"));
});
afterAll(async () => {
  for (const child of running) stop(child);
  await database.drop();
  project.remove();
});

/** `npm start` in its own process group, so stopping it stops the service npm started. */
function npmStart() {
  const child = spawn("npm", ["start"], {
    cwd: project.dir,
    detached: true,
    env: { ...process.env, DATABASE_URL: database.url, PORT: "0", SEED_SAMPLE_DATA: "false", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const { port, exited } = followStart(child);
  return { child, port, exited };
}

function stop(child: ChildProcess) {
  running.delete(child);
  if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
}

async function startAndStop(check?: (origin: string) => Promise<void>): Promise<number> {
  const startedAt = performance.now();
  const service = npmStart();
  const port = await service.port;
  const response = await fetch(`http://127.0.0.1:${port}/agents`);
  const elapsed = performance.now() - startedAt;
  expect(response.status).toBe(200);
  await check?.(`http://127.0.0.1:${port}`);
  stop(service.child);
  // Not only npm: the service it started writes to the same pipes, which close once it has exited too.
  await new Promise((closed) => service.child.once("close", closed));
  return elapsed;
}

const file = (path: string) => join(project.dir, path);
const builtAt = () => statSync(file("dist/src/main.js")).mtimeMs;

describe("npm start", () => {
  it("on a built tree answers within 3 s and does not build again", { timeout: 300_000 }, async () => {
    const build = await project.run("npm", ["run", "build"]);
    expect(build.code, build.stderr).toBe(0);
    // docs/console.md: the build reports the console's gzipped JavaScript against its budget.
    const size = /console: \d+ script\(s\), (\d+\.\d) KB of JavaScript gzipped \(budget 300\.0 KB\)/.exec(build.stdout);
    expect(size, build.stdout).not.toBeNull();
    // React's production build (about 100 KB in all), though npm ran under vitest's NODE_ENV=test.
    expect(Number(size?.[1])).toBeLessThan(150);
    const built = builtAt();
    const stamp = readFileSync(file("dist/.build-stamp"), "utf8");

    // A new mtime with the same content (a checkout, a copy) is not a change.
    const now = new Date();
    utimesSync(file("src/config.ts"), now, now);

    // The console is served from the build, with nothing else to install.
    const servesConsole = async (origin: string) => {
      const page = await fetch(`${origin}/ui`);
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      expect((await fetch(`${origin}${script}`)).status).toBe(200);
    };
    expect(await startAndStop(servesConsole)).toBeLessThan(startBudgetMs);
    expect(builtAt()).toBe(built);
    expect(readFileSync(file("dist/.build-stamp"), "utf8")).toBe(stamp);
  });

  it("builds first when a source changed since the last build", { timeout: 300_000 }, async () => {
    const stamp = readFileSync(file("dist/.build-stamp"), "utf8");
    const consoleBuiltAt = statSync(file("dist/ui/index.html")).mtimeMs;
    appendFileSync(file("src/config.ts"), "\n// Changed after the build.\n");

    await startAndStop();
    expect(readFileSync(file("dist/src/config.js"), "utf8")).toContain("// Changed after the build.");
    expect(readFileSync(file("dist/.build-stamp"), "utf8")).not.toBe(stamp);
    // The console is made of its own sources alone: not built again.
    expect(statSync(file("dist/ui/index.html")).mtimeMs).toBe(consoleBuiltAt);

    // And the next start is a fast one again.
    const built = builtAt();
    expect(await startAndStop()).toBeLessThan(startBudgetMs);
    expect(builtAt()).toBe(built);
  });

  it("builds the SDK again when one of its sources changed", { timeout: 300_000 }, async () => {
    const stamp = readFileSync(file("dist/.build-stamp"), "utf8");
    appendFileSync(file("packages/sdk/src/worker/backoff.ts"), "\n// Changed after the build.\n");

    await startAndStop();
    expect(readFileSync(file("packages/sdk/dist/worker/backoff.js"), "utf8")).toContain("// Changed after the build.");
    expect(readFileSync(file("dist/.build-stamp"), "utf8")).not.toBe(stamp);
  });
});
