import { type ChildProcess, spawn } from "node:child_process";

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

const projectRoot = new URL("../..", import.meta.url).pathname;

/** Runs a command in the project folder to its end; `input` is written to its stdin. */
export function run(command: string, args: string[], env: NodeJS.ProcessEnv, input = ""): Promise<Finished> {
  const child = spawn(command, args, { cwd: projectRoot, env });
  child.stdin.end(input);
  return finished(child);
}

/** What a process has written so far, kept as it comes. */
function outputOf(child: ChildProcess) {
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk) => {
    output.stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output.stderr += chunk;
  });
  return () => ({ ...output });
}

/** A process's exit code and all it wrote, once it has ended and closed its output. */
export function finished(child: ChildProcess): Promise<Finished> {
  const output = outputOf(child);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, ...output() }));
  });
}

/**
 * Follows a service process as it starts: its output so far, its exit code,
 * and the port it logs once it listens (rejected if it exits first).
 */
export function followStart(child: ChildProcess) {
  const output = outputOf(child);
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const port = new Promise<number>((resolve, reject) => {
    child.stdout?.on("data", () => {
      const match = /"port":(\d+)/.exec(output().stdout);
      if (match) resolve(Number(match[1]));
    });
    void exited.then((code) => {
      const { stdout, stderr } = output();
      reject(new Error(`exited (${code}) before listening:\n${stdout}\n${stderr}`));
    });
  });
  return { exited, port, output };
}
