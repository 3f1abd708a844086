import type { Worker, WorkerEvents } from "../../packages/sdk/src/worker.js";

const names = ["lease", "succeeded", "failed", "cancelled", "lost", "released", "error"] as const;

export type Recorded<Input, Result> = {
  [Name in keyof WorkerEvents<Input, Result>]: { event: Name; value: WorkerEvents<Input, Result>[Name] };
}[keyof WorkerEvents<Input, Result>];

/** Every event the worker emits from now on, in order. */
export function recordEvents<Input, Result>(worker: Worker<Input, Result>): Recorded<Input, Result>[] {
  const recorded: Recorded<Input, Result>[] = [];
  for (const event of names) {
    worker.on(event, (value: unknown) => {
      recorded.push({ event, value } as Recorded<Input, Result>);
    });
  }
  return recorded;
}

/** The next `event` whose value passes `check`. */
export function nextEvent<Input, Result, Name extends keyof WorkerEvents<Input, Result>>(
  worker: Worker<Input, Result>,
  event: Name,
  check: (value: WorkerEvents<Input, Result>[Name]) => boolean = () => true,
): Promise<WorkerEvents<Input, Result>[Name]> {
  return new Promise((resolve) => {
    const listener = (value: WorkerEvents<Input, Result>[Name]) => {
      if (!check(value)) return;
      worker.off(event, listener);
      resolve(value);
    };
    worker.on(event, listener);
  });
}

/** Starts the worker, waits for `count` tasks to succeed, and stops it. */
export async function runUntilSucceeded<Input, Result>(worker: Worker<Input, Result>, count: number): Promise<void> {
  let succeeded = 0;
  const done = new Promise<void>((resolve) => worker.on("succeeded", () => ++succeeded === count && resolve()));
  const running = worker.start();
  await done;
  await worker.stop();
  await running;
}

/** A promise and its resolve, for a handler that waits until the test lets it go. */
export function gate<T = void>() {
  let open: (value: T) => void = () => {};
  const opened = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** The events' names and task ids, in order: what a test compares. */
export const outline = <Input, Result>(recorded: Recorded<Input, Result>[]) =>
  recorded.map(({ event, value }) => (event === "error" ? `error ${value.message}` : `${event} ${value.task.title}`));
