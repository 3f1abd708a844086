// A front end's typed client, in a project of its own: the router's type and
// its input and output types come from the packed SDK's `client` entry;
// nothing of the server comes along. test/sdk-package.test.ts type-checks
// this file in such a project, with `tsc --init`'s default settings.
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import type { Agent, AppRouter, RouterInputs, Task } from "agent-management-sdk/client";

const api = createTRPCClient<AppRouter>({
  links: [httpBatchLink({ url: "http://127.0.0.1:8000/trpc" })],
});

/** Creates an agent, gives it a task, and lists its pending tasks. */
export async function startScout(): Promise<{ agent: Agent; pending: Task[] }> {
  const input: RouterInputs["agents"]["create"] = { name: "Scout", type: "worker" };
  const agent = await api.agents.create.mutate(input);
  await api.tasks.create.mutate({ agent_id: agent.id, title: "Survey the area", priority: 5 });
  const { items: pending } = await api.tasks.list.query({ agent_id: agent.id, status: "pending", limit: 10 });
  return { agent, pending };
}

/**
 * What a failed call says: its HTTP status, the REST error kind (`validation_error`,
 * `conflict`, …), a readable message, and for a validation error each field's issue.
 */
export function explain(cause: unknown): string {
  if (!(cause instanceof TRPCClientError)) throw cause;
  const error: TRPCClientError<AppRouter> = cause;
  const fields = (error.data?.details?.issues ?? []).map((issue) => `${issue.field}: ${issue.message}`);
  return [`${error.data?.httpStatus} ${error.data?.error}: ${error.message}`, ...fields].join("\n");
}
