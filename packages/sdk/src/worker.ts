// The SDK's `./worker` entry: `createWorker` runs an agent's tasks through
// leases, with nothing but the platform's node:http and node:https underneath
// (Node.js 20+; Deno and Bun provide them too).
export { createWorker, type StopOptions, type Worker } from "./worker/create-worker.js";
export { ApiError, NonRetryableError, type NonRetryableErrorOptions, TaskAbortedError } from "./worker/errors.js";
export type { Listener, WorkerEvents } from "./worker/events.js";
export type { AgentSelector, Handler, HandlerContext, WorkerOptions } from "./worker/options.js";
export type { JsonValue, Lease, Task, TaskError, TaskStatus } from "./worker/types.js";
