import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyProject, type ProjectCopy } from "./helpers/project-copy.js";

// docs/clients.md: `import type { AppRouter } from "agent-management-api/client"`
// type-checks in a separate project with default `tsc --init` settings,
// without the service's sources. Packed, installed and checked as a front
// end would.
const require = createRequire(import.meta.url);
const versionOf = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
const packageJson = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  name: string;
  version: string;
};

let project: ProjectCopy;
let frontEnd: string;
let tarball: string;
let scratch: string | undefined;

beforeAll(async () => {
  project = copyProject();
  const build = await project.run("npm", ["run", "build"]);
  expect(build.code, build.stderr).toBe(0);
  // Outside the copy, whose node_modules (the service's) the front end must not see.
  scratch = mkdtempSync(join(tmpdir(), "agents-front-end-"));
  // --ignore-scripts: `prepare` generates the Prisma clients, which the tarball does not carry.
  const pack = await project.run("npm", ["pack", "--ignore-scripts", "--pack-destination", scratch]);
  expect(pack.code, pack.stderr).toBe(0);
  tarball = join(scratch, `${packageJson.name}-${packageJson.version}.tgz`);

  frontEnd = join(scratch, "front-end");
  mkdirSync(frontEnd);
  writeFileSync(join(frontEnd, "package.json"), JSON.stringify({ name: "front-end", private: true, type: "module" }));
  // The front end needs the types only: --ignore-scripts skips building the
  // service's native SQLite driver.
  const install = await project.run(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      tarball,
      `@trpc/client@${versionOf("@trpc/client")}`,
      `@trpc/server@${versionOf("@trpc/server")}`,
      `zod@${versionOf("zod")}`,
      `typescript@${versionOf("typescript")}`,
    ],
    { cwd: frontEnd },
  );
  expect(install.code, install.stderr).toBe(0);
  const init = await tsc(["--init"]);
  expect(init.code, init.stdout).toBe(0);
}, 600_000);
afterAll(() => {
  project?.remove();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** The front end's own tsc, in its folder. */
function tsc(args: string[]) {
  const bin = join(frontEnd, "node_modules/typescript/bin/tsc");
  return project.run(process.execPath, [bin, ...args], { cwd: frontEnd });
}

/** tsc in the front end's folder, with the tsconfig.json `tsc --init` wrote. */
async function typeCheck(files: Record<string, string>) {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(frontEnd, name), text);
  const done = await tsc(["-p", ".", "--pretty", "false"]);
  return { code: done.code, errors: done.stdout.split("\n").filter((line) => / error TS\d+:/.test(line)) };
}

/** The README's front-end example, as the front end's own file. */
const client = readFileSync(new URL("../examples/front-end-client.ts", import.meta.url), "utf8");

describe("the packed client entry", () => {
  it("holds the declaration and nothing of the service's sources", () => {
    const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n").sort();
    expect(files).toEqual([
      "package/README.md",
      "package/dist/client/index.d.ts",
      "package/dist/client/index.js",
      "package/package.json",
    ]);
  });

  it("names no module but @trpc/server (and zod), and runs no install script where it is installed", () => {
    const installed = join(frontEnd, "node_modules", packageJson.name);
    const declaration = readFileSync(join(installed, "dist/client/index.d.ts"), "utf8");
    const imports = declaration.matchAll(/^import [^\n]* from "([^"]+)";$|import\("([^"]+)"\)/gm);
    const modules = new Set([...imports].map((match) => match[1] ?? match[2]));
    // What a front end has: tRPC's types, and zod's should a procedure's type name one.
    expect(modules).toContain("@trpc/server");
    expect([...modules].filter((module) => module !== "@trpc/server" && module !== "zod")).toEqual([]);
    const { scripts } = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(Object.keys(scripts).filter((name) => /^(pre|post)?install$/.test(name))).toEqual([]);
  });

  it("type-checks the README's client of agents.create and tasks.list under tsc --init's defaults", {
    timeout: 120_000,
  }, async () => {
    expect(await typeCheck({ "client.ts": client })).toEqual({ code: 0, errors: [] });
  });

  it("refuses a wrong input and a wrong use of an output", { timeout: 120_000 }, async () => {
    const wrong = `import { createTRPCClient, httpBatchLink } from "@trpc/client";
import type { AppRouter } from "agent-management-api/client";

const api = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: "http://127.0.0.1:8000/trpc" })] });
const agent = await api.agents.create.mutate({ name: 1, type: "worker" });
const count: number = agent.name;
await api.tasks.list.query({ agent_id: agent.id, status: "sleeping" });
export { count };
`;
    const result = await typeCheck({ "client.ts": client, "wrong.ts": wrong });
    expect(result.code).toBe(2);
    expect(result.errors.map((line) => line.replace(/: error (TS\d+):.*/, " $1"))).toEqual([
      "wrong.ts(5,48) TS2322",
      "wrong.ts(6,7) TS2322",
      "wrong.ts(7,50) TS2322",
    ]);
  });
});
