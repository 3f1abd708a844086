import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Finished, finished } from "./spawn.js";

const projectRoot = new URL("../..", import.meta.url).pathname;
/** What a build and a start read; node_modules is linked, not copied. */
const copied = [
  "src",
  "packages",
  "scripts",
  "ui",
  "shared",
  "prisma",
  "prisma.config.ts",
  "tsconfig.json",
  "tsconfig.build.json",
  "package.json",
  "package-lock.json",
  "README.md",
];

export interface ProjectCopy {
  dir: string;
  /** Runs a command to its end, in the copy unless `cwd` says otherwise. */
  run: (command: string, args: string[], options?: { env?: NodeJS.ProcessEnv; cwd?: string }) => Promise<Finished>;
  remove: () => void;
}

/**
 * The project's sources in a temporary folder, so a test can build, edit and
 * pack them without touching the working tree's dist/ that other tests use.
 */
export function copyProject(): ProjectCopy {
  const dir = mkdtempSync(join(tmpdir(), "agents-project-"));
  // Built output stays behind: a copy builds its own.
  const unbuilt = (source: string) => !/\/packages\/[^/]+\/dist$/.test(source);
  for (const path of copied) cpSync(join(projectRoot, path), join(dir, path), { recursive: true, filter: unbuilt });
  symlinkSync(join(projectRoot, "node_modules"), join(dir, "node_modules"), "dir");
  return {
    dir,
    run: (command, args, { env = process.env, cwd = dir } = {}) =>
      finished(spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] })),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
