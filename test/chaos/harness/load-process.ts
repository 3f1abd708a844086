import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "./service.js";

/** A message between the test and a load generator: `type` says what it is. */
export interface Message {
  type: string;
  [key: string]: unknown;
}

export interface LoadProcess {
  /** Resolves with the next message of this type (one already received counts). */
  next<T extends Message = Message>(type: string, timeoutMs?: number): Promise<T>;
  send(message: Message): void;
  /** Resolves once the process has exited; rejects when it failed. */
  done: Promise<void>;
  kill(): void;
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * Runs `test/chaos/load/<script>.ts` in its own Node process, so the load it
 * makes and the latencies it measures are not distorted by the test runner's
 * event loop. `input` arrives as the script's first message.
 */
export function startLoad(script: string, input: unknown): LoadProcess {
  const child = fork(join(projectRoot, "test/chaos/load", `${script}.ts`), [], {
    cwd: projectRoot,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  running.add(child);
  const received: Message[] = [];
  const waiting: { type: string; resolve: (message: Message) => void }[] = [];
  child.on("message", (message: Message) => {
    const waiter = waiting.findIndex((w) => w.type === message.type);
    if (waiter >= 0) waiting.splice(waiter, 1)[0]?.resolve(message);
    else received.push(message);
  });
  const done = new Promise<void>((resolve, reject) =>
    child.once("exit", (code, signal) => {
      running.delete(child);
      if (code === 0) resolve();
      else reject(new Error(`load generator ${script} exited with ${code ?? signal}`));
    }),
  );
  done.catch(() => {}); // awaited by next() and by callers that care
  child.send({ type: "input", input });
  return {
    next: <T extends Message>(type: string, timeoutMs = 120_000) => {
      const index = received.findIndex((m) => m.type === type);
      if (index >= 0) return Promise.resolve(received.splice(index, 1)[0] as T);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${script}: no "${type}" within ${timeoutMs} ms`)), timeoutMs);
        waiting.push({
          type,
          resolve: (message) => {
            clearTimeout(timer);
            resolve(message as T);
          },
        });
        done.then(
          () => reject(new Error(`${script} exited before sending "${type}"`)),
          (error: unknown) => reject(error),
        );
      });
    },
    send: (message) => {
      if (child.connected) child.send(message);
    },
    done,
    kill: () => child.kill("SIGKILL"),
  };
}
