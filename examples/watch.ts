// Watch one agent's tasks live, two ways: the REST stream read by hand
// (GET /events/stream, resumed with Last-Event-ID after a reconnect), and the
// typed tRPC subscription (httpSubscriptionLink resumes by itself).
// Run: API_URL=http://127.0.0.1:8000 AGENT_ID=… npx tsx examples/watch.ts
// It prints what it sees: one event on a first connection, COUNT more on a second one that resumes
// after it, and the same COUNT again through tRPC, resumed from the same point (COUNT: default 2).
import { createTRPCClient, httpSubscriptionLink } from "@trpc/client";
import { EventSource } from "eventsource";
import type { AppRouter } from "../src/modules/index.js";

const api = process.env.API_URL ?? "http://127.0.0.1:8000";
const agentId = process.env.AGENT_ID ?? "";
const count = Number(process.env.COUNT ?? 2);

/** One stream connection: prints task events until `wanted` were seen; returns the last id, to resume from. */
async function follow(
  lastEventId: string | undefined,
  wanted: number,
): Promise<{ lastEventId?: string; seen: number }> {
  const res = await fetch(`${api}/events/stream?agent_id=${agentId}&types=task.*`, {
    headers: lastEventId ? { "Last-Event-ID": lastEventId } : {},
  });
  if (res.status !== 200 || !res.body) throw new Error(`stream refused: ${res.status} ${await res.text()}`);
  console.log("watching", agentId);
  const decoder = new TextDecoder();
  let buffered = "";
  let seen = 0;
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf("\n\n"); end !== -1; end = buffered.indexOf("\n\n")) {
      const message = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const fields = Object.fromEntries(
        message.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
      );
      if (fields.event === "gap") console.log("gap", fields.data); // events were purged before we read them
      if (!fields.id) continue; // retry, keep-alive comments
      lastEventId = fields.id;
      const event = JSON.parse(fields.data ?? "{}");
      console.log("rest", event.type, event.task_id, event.data.task.status);
      if (++seen === wanted) break;
    }
    // Leaving the loop closes the connection.
    if (seen === wanted) break;
  }
  return { lastEventId, seen };
}

// Two connections: the second resumes where the first stopped, missing nothing written in between.
const first = await follow(undefined, 1);
console.log("reconnect", first.lastEventId);
await follow(first.lastEventId, count);

// The same over tRPC, typed from the router: items carry their event id.
const trpc = createTRPCClient<AppRouter>({ links: [httpSubscriptionLink({ url: `${api}/trpc`, EventSource })] });
await new Promise<void>((resolve, reject) => {
  let seen = 0;
  const subscription = trpc.events.stream.subscribe(
    { agent_id: agentId, types: "task.*", after: first.lastEventId },
    {
      onData: ({ id, data }) => {
        if (data.type === "gap") return;
        console.log("trpc", id, data.type, data.task_id);
        if (++seen === count) {
          subscription.unsubscribe();
          resolve();
        }
      },
      onError: reject,
    },
  );
});
