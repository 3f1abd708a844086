// A typed tRPC client: create, list, update, replace and delete an agent, and
// read a data group, through the same procedures the REST paths serve. Types
// come from the router itself.
// Run: API_URL=http://127.0.0.1:8000 npx tsx examples/trpc-client.ts
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import type { AppRouter } from "../src/modules/index.js";

const api = createTRPCClient<AppRouter>({
  links: [httpBatchLink({ url: `${process.env.API_URL ?? "http://127.0.0.1:8000"}/trpc` })],
});

const agent = await api.agents.create.mutate({ name: "Scout", type: "worker" });
console.log("created", JSON.stringify(agent));

const idle = await api.agents.list.query({ status: "idle", limit: 10 });
console.log("listed", JSON.stringify(idle.items.map((a) => a.id)));

const running = await api.agents.update.mutate({ agent_id: agent.id, status: "running" });
console.log("updated", running.status);

const replaced = await api.agents.replace.mutate({ agent_id: agent.id, name: "Lead", type: "supervisor" });
console.log("replaced", JSON.stringify(replaced));

await api.agents.remove.mutate({ agent_id: agent.id });
console.log("deleted", agent.id);

// The data groups are procedures too: the latest COE round, in v1's format.
const latest = await api.data.v1.coe.latest.query({});
console.log("premiums", JSON.stringify(latest.data.map((row) => [row.vehicle_class, row.premium])));

// Business errors carry the HTTP status and the REST error kind.
try {
  await api.agents.get.query({ agent_id: agent.id });
} catch (cause) {
  if (!(cause instanceof TRPCClientError)) throw cause;
  const error: TRPCClientError<AppRouter> = cause;
  console.log("missing", error.data?.httpStatus, error.data?.code, error.message);
}

// A validation error: the same kind and field issues as the REST body, on error.data.
try {
  await api.agents.create.mutate({ name: "", type: "worker" });
} catch (cause) {
  if (!(cause instanceof TRPCClientError)) throw cause;
  const error: TRPCClientError<AppRouter> = cause;
  console.log("invalid", error.data?.error, JSON.stringify(error.data?.details?.issues));
}
