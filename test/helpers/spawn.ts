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

/** A process's exit code and all it wrote, once it has ended and closed its output. */
export function finished(child: ChildProcess): Promise<Finished> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Follows a service process as it starts: its output so far, its exit code,
 * and the port it logs once it listens (rejected if it exits first).
 */
export function followStart(child: ChildProcess) {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const port = new Promise<number>((resolve, reject) => {
    child.stdout?.on("data", () => {
      const match = /"port":(\d+)/.exec(stdout);
      if (match) resolve(Number(match[1]));
    });
    void exited.then((code) => reject(new Error(`exited (${code}) before listening:\n${stdout}\n${stderr}`)));
  });
  return { exited, port, output: () => ({ stdout, stderr }) };
}
