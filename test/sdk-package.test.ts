import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createTask } from "./helpers/factories.js";
import { getTask, runningAgent } from "./helpers/leases.js";
import { copyProject, type ProjectCopy } from "./helpers/project-copy.js";

// The SDK (packages/sdk) as a user gets it: packed with `npm pack -w
// packages/sdk`, installed into empty projects, type-checked under `tsc
// --init`'s defaults (docs/clients.md, docs/api/leases.md#the-worker-sdk),
// and its worker run against the real service.
const require = createRequire(import.meta.url);
const versionOf = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
type Manifest = {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
};
const manifest = (path: string) => JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8")) as Manifest;
const rootManifest = manifest("../package.json");
const sdkManifest = manifest("../packages/sdk/package.json");
/** What the service runs on, none of which a worker or a front end may pull in. */
const serverPackages = ["@prisma/client", "prisma", "express", "better-sqlite3", "pg", "pino", "trpc-to-openapi"];

describe("the SDK's package.json", () => {
  it("has the API's version, no dependency, and tRPC's version range as its optional peers", () => {
    expect(sdkManifest.name).toBe("agent-management-sdk");
    expect(sdkManifest.version).toBe(rootManifest.version);
    expect(sdkManifest.dependencies).toBeUndefined();
    expect(sdkManifest.peerDependencies).toEqual({
      "@trpc/client": rootManifest.dependencies?.["@trpc/client"],
      "@trpc/server": rootManifest.dependencies?.["@trpc/server"],
    });
  });
});

describe("the packed SDK", () => {
  let project: ProjectCopy;
  let app: TestApp;
  let scratch: string;
  let tarball: string;
  /** A front end: the SDK with @trpc/client, @trpc/server, zod and TypeScript. */
  let frontEnd: string;
  /** A worker: the SDK alone. */
  let workerOnly: string;
  let typescript7: string;

  const install = (cwd: string, packages: string[]) =>
    project.run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...packages], { cwd });
  function emptyProject(name: string) {
    const dir = join(scratch, name);
    mkdirSync(dir);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
    return dir;
  }

  beforeAll(async () => {
    app = await startTestApp();
    project = copyProject();
    // Outside the copy, whose node_modules (the service's) the projects must not see.
    scratch = mkdtempSync(join(tmpdir(), "agents-sdk-"));
    // No build first: packing builds what is missing (the package's prepack).
    const pack = await project.run("npm", ["pack", "-w", "packages/sdk", "--pack-destination", scratch]);
    expect(pack.code, pack.stderr).toBe(0);
    tarball = join(scratch, `${sdkManifest.name}-${sdkManifest.version}.tgz`);

    frontEnd = emptyProject("front-end");
    const frontEndInstall = await install(frontEnd, [
      tarball,
      `@trpc/client@${versionOf("@trpc/client")}`,
      `@trpc/server@${versionOf("@trpc/server")}`,
      `zod@${versionOf("zod")}`,
      `typescript@${versionOf("typescript")}`,
    ]);
    expect(frontEndInstall.code, frontEndInstall.stderr).toBe(0);
    const init = await tsc(["--init"]);
    expect(init.code, init.stdout).toBe(0);

    workerOnly = emptyProject("worker-only");
    const workerInstall = await install(workerOnly, [tarball]);
    expect(workerInstall.code, workerInstall.stderr).toBe(0);

    // `npm i typescript` in a new project installs TypeScript 7, the native compiler.
    typescript7 = emptyProject("typescript-7");
    const typescript7Install = await install(typescript7, ["typescript@7.0.2"]);
    expect(typescript7Install.code, typescript7Install.stderr).toBe(0);
  }, 600_000);
  afterAll(async () => {
    project?.remove();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    await app?.close();
  });

  /** The front end's own tsc, in its folder. */
  function tsc(args: string[], bin = join(frontEnd, "node_modules/typescript/bin/tsc")) {
    return project.run(process.execPath, [bin, ...args], { cwd: frontEnd });
  }

  /** tsc in the front end's folder, with the tsconfig.json `tsc --init` wrote (it emits .js beside each file). */
  async function typeCheck(files: Record<string, string>, bin?: string) {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(frontEnd, name), text);
    const done = await tsc(["-p", ".", "--pretty", "false"], bin);
    return { code: done.code, errors: done.stdout.split("\n").filter((line) => / error TS\d+:/.test(line)) };
  }

  /** Every package installed in `dir`, by name. */
  function installed(dir: string): string[] {
    const names = new Set<string>();
    type Tree = { version?: string; dependencies?: Record<string, Tree> };
    const walk = (tree: Tree) => {
      for (const [name, child] of Object.entries(tree.dependencies ?? {})) {
        if (child.version) names.add(name);
        walk(child);
      }
    };
    walk(JSON.parse(execFileSync("npm", ["ls", "--all", "--json"], { cwd: dir, encoding: "utf8" })) as Tree);
    return [...names].sort();
  }

  /** The README's front-end example, as the front end's own file. */
  const client = readFileSync(new URL("../examples/front-end-client.ts", import.meta.url), "utf8");
  /** A worker that uses both entries: the router's Task is the worker's, both ways. */
  const worker = (
    baseUrl: string,
    agentId: string,
  ) => `import type { AppRouter, RouterOutputs, Task } from "agent-management-sdk/client";
import { createWorker, type Lease, NonRetryableError, type Task as WorkerTask } from "agent-management-sdk/worker";

type Stored = WorkerTask<Task["input"], Task["result"]>;
export const fromRouter = (task: Task): Stored => task;
export const toRouter = (task: Stored): Task => task;
type RouterLease = RouterOutputs["leases"]["get"];
export const leaseFromRouter = (lease: RouterLease): Lease<Task["input"], Task["result"]> => lease;
export const leaseToRouter = (lease: Lease<Task["input"], Task["result"]>): RouterLease => lease;
export type { AppRouter };

const apiKey: string | undefined = undefined;
const worker = createWorker<{ words: string[] }, { count: number }>({
  baseUrl: ${JSON.stringify(baseUrl)},
  apiKey,
  agentId: ${JSON.stringify(agentId)},
  concurrency: 2,
  handler: async (task, { signal }) => {
    if (signal.aborted) throw new NonRetryableError("stopped", { code: "stopped" });
    return { count: task.input.words.length };
  },
});
worker.on("succeeded", ({ task, result }) => {
  console.log(JSON.stringify({ id: task.id, count: result.count }));
  void worker.stop();
});
await worker.start();
`;

  it("holds the built entries, a README and its manifest, and nothing of the sources", () => {
    const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n").sort();
    const modules = ["backoff", "create-worker", "errors", "events", "http", "lease-run", "options", "types"];
    expect(files).toEqual(
      [
        "package/README.md",
        "package/package.json",
        "package/dist/client.d.ts",
        "package/dist/client.js",
        "package/dist/worker.d.ts",
        "package/dist/worker.js",
        ...modules.flatMap((name) => [`package/dist/worker/${name}.d.ts`, `package/dist/worker/${name}.js`]),
      ].sort(),
    );
  });

  it("installs nothing of the server: the SDK alone for a worker, with tRPC's packages for a front end", () => {
    expect(installed(workerOnly)).toEqual(["agent-management-sdk"]);
    const frontEndPackages = installed(frontEnd);
    expect(frontEndPackages).toEqual(["@trpc/client", "@trpc/server", "agent-management-sdk", "typescript", "zod"]);
    const { scripts } = JSON.parse(
      readFileSync(join(workerOnly, "node_modules/agent-management-sdk/package.json"), "utf8"),
    ) as Manifest;
    expect(Object.keys(scripts ?? {}).filter((name) => /^(pre|post)?install$/.test(name))).toEqual([]);
    for (const name of serverPackages) expect(frontEndPackages).not.toContain(name);
  });

  it("its client declaration names no module but @trpc/server (and zod)", () => {
    const declaration = readFileSync(join(frontEnd, "node_modules/agent-management-sdk/dist/client.d.ts"), "utf8");
    const imports = declaration.matchAll(/^import [^\n]* from "([^"]+)";$|import\("([^"]+)"\)/gm);
    const modules = new Set([...imports].map((match) => match[1] ?? match[2]));
    // What a front end has: tRPC's types, and zod's should a procedure's type name one.
    expect(modules).toContain("@trpc/server");
    expect([...modules].filter((module) => module !== "@trpc/server" && module !== "zod")).toEqual([]);
  });

  it("its worker's declarations name no module, and its code none but node:http and node:https", () => {
    const dist = join(workerOnly, "node_modules/agent-management-sdk/dist");
    const modulesOf = (files: string[]) => {
      const text = files.map((file) => readFileSync(join(dist, file), "utf8")).join("\n");
      const named = [...text.matchAll(/from "([^"]+)"|import\("([^"]+)"\)/g)].map((match) => match[1] ?? match[2]);
      return [...new Set(named.filter((module) => !module?.startsWith("./")))].sort();
    };
    const files = ["worker.d.ts", "worker.js", ...readdirSync(join(dist, "worker")).map((file) => `worker/${file}`)];
    expect(modulesOf(files.filter((file) => file.endsWith(".d.ts")))).toEqual([]);
    expect(modulesOf(files.filter((file) => file.endsWith(".js")))).toEqual(["node:http", "node:https"]);
  });

  it("type-checks the front end's client and a worker under tsc --init's defaults, TypeScript 5 and 7", {
    timeout: 120_000,
  }, async () => {
    const files = { "client.ts": client, "worker.ts": worker(app.baseUrl, "unused") };
    expect(await typeCheck(files)).toEqual({ code: 0, errors: [] });
    // The declarations themselves too, not only their use.
    // tRPC 11.22's own declarations name Node's modules (its adapters'), which a front end without Node's types
    // lacks: their errors are tRPC's, not the SDK's, so only the rest must be none.
    const strict = await tsc(["-p", ".", "--noEmit", "--skipLibCheck", "false", "--pretty", "false"]);
    const ours = strict.stdout.split("\n").filter((line) => line && !line.startsWith("node_modules/@trpc/"));
    expect(ours).toEqual([]);
    expect(await typeCheck(files, join(typescript7, "node_modules/typescript/bin/tsc"))).toEqual({
      code: 0,
      errors: [],
    });
  });

  it("type-checks a worker with a bare `tsc --strict file.ts`, which resolves modules without exports", {
    timeout: 60_000,
  }, async () => {
    writeFileSync(
      join(workerOnly, "bare.ts"),
      `import { createWorker, NonRetryableError } from "agent-management-sdk/worker";

export function start(agentId: string): Promise<void> {
  const worker = createWorker<{ n: number }, number>({
    baseUrl: "http://127.0.0.1:8000",
    agentId,
    handler: (task) => {
      if (task.input.n < 0) throw new NonRetryableError("negative");
      return task.input.n * 2;
    },
  });
  return worker.start();
}
`,
    );
    const bare = await project.run(process.execPath, [
      join(frontEnd, "node_modules/typescript/bin/tsc"),
      "--noEmit",
      "--strict",
      "--pretty",
      "false",
      join(workerOnly, "bare.ts"),
    ]);
    expect(bare.stdout).toBe("");
    expect(bare.code).toBe(0);
  });

  it("refuses a wrong input and a wrong use of an output", { timeout: 120_000 }, async () => {
    const wrong = `import { createTRPCClient, httpBatchLink } from "@trpc/client";
import type { AppRouter } from "agent-management-sdk/client";

const api = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: "http://127.0.0.1:8000/trpc" })] });
const agent = await api.agents.create.mutate({ name: 1, type: "worker" });
const count: number = agent.name;
await api.tasks.list.query({ agent_id: agent.id, status: "sleeping" });
export { count };
`;
    const result = await typeCheck({ "client.ts": client, "wrong.ts": wrong });
    rmSync(join(frontEnd, "wrong.ts"));
    expect(result.code).toBe(2);
    expect(result.errors.map((line) => line.replace(/: error (TS\d+):.*/, " $1"))).toEqual([
      "wrong.ts(5,48) TS2322",
      "wrong.ts(6,7) TS2322",
      "wrong.ts(7,50) TS2322",
    ]);
  });

  it("runs a worker, compiled by tsc, with the SDK alone installed: it completes a task", {
    timeout: 60_000,
  }, async () => {
    const agent = await runningAgent(app);
    const task = await createTask(app, agent.id, { title: "count", input: { words: ["a", "b", "c"] } });
    expect(await typeCheck({ "worker.ts": worker(app.baseUrl, agent.id) })).toEqual({ code: 0, errors: [] });
    copyFileSync(join(frontEnd, "worker.js"), join(workerOnly, "worker.js"));
    const run = await project.run(process.execPath, ["worker.js"], { cwd: workerOnly });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ id: task.id, count: 3 });
    expect(await getTask(app, task)).toMatchObject({ status: "succeeded", result: { count: 3 }, lease: null });
  });
});
