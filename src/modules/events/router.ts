import { tracked } from "@trpc/server";
import { z } from "zod";
import type { Context } from "../../trpc/context.js";
import { projectProcedure, router } from "../../trpc/procedures.js";
import type { ServerSentEvent } from "../../trpc/server-sent-events.js";
import { eventJson, eventOut } from "./event-body.js";
import type { StreamItem } from "./follow.js";
import { EventGap, EventList, EventListQuery, EventStreamQuery, EventSubscriptionInput } from "./schemas.js";
import { eventsService, nextPageLink } from "./service.js";
import type { EventRecord } from "./types.js";

const tags = ["events"];

// What a client waits before it reconnects (the stream's first message).
const RECONNECT_MS = 3000;

const deps = (ctx: Context) => ({ db: ctx.db, logger: ctx.logger, settings: ctx.config.events });
const until = (ctx: Context, signal: AbortSignal | undefined) =>
  signal ? AbortSignal.any([ctx.shutdown, signal]) : ctx.shutdown;

/**
 * An event's message, made once however many streams send it: the hub hands
 * every stream the same records.
 */
const messages = new WeakMap<EventRecord, ServerSentEvent>();
function eventMessage(event: EventRecord): ServerSentEvent {
  let message = messages.get(event);
  if (!message) {
    message = { id: String(event.id), event: event.type, json: eventJson(event) };
    messages.set(event, message);
  }
  return message;
}

/** The messages of events that arrived together: the same array for every stream handed the same events. */
const batches = new WeakMap<readonly EventRecord[], ServerSentEvent[]>();
function eventMessages(events: readonly EventRecord[]): ServerSentEvent[] {
  let batch = batches.get(events);
  if (!batch) {
    batch = events.map(eventMessage);
    batches.set(events, batch);
  }
  return batch;
}

/** A stream's items as server-sent events (docs/api/events.md); events that arrived together, as one batch. */
async function* serverSentEvents(
  items: AsyncIterable<StreamItem>,
): AsyncGenerator<ServerSentEvent | ServerSentEvent[]> {
  for await (const item of items) {
    // The first message, once the stream holds its place in the log.
    if (item.kind === "subscribed") yield { retry: RECONNECT_MS };
    else if (item.kind === "events") yield eventMessages(item.events);
    else if (item.kind === "gap") yield { event: "gap", data: { oldest_id: item.oldestId?.toString() ?? null } };
    else yield { comment: "keep-alive" };
  }
}

/** A stream's items as tRPC tracked items: `httpSubscriptionLink` reconnects from the last id it received. */
async function* trackedEvents(items: AsyncIterable<StreamItem>) {
  for await (const item of items) {
    if (item.kind === "events") {
      for (const event of item.events) yield tracked(String(event.id), eventOut(event));
    } else if (item.kind === "gap") {
      // Tracked at the purged position: a client that reconnects goes on from the oldest kept event.
      yield tracked(String(item.through), { type: "gap" as const, oldest_id: item.oldestId?.toString() ?? null });
    }
  }
}

const eventStreamDocument = {
  schema: {
    type: "string",
    description:
      "Server-sent events: first `retry: 3000`; then each event as `id: <id>`, `event: <type>`, `data: <Event as one line of JSON>`; " +
      '`event: gap` with `data: {"oldest_id": …}` (EventGap) first when the resume point was already purged; ' +
      "a `: keep-alive` comment after 15 s of silence. Each message's data follows `x-itemSchema`.",
    example:
      "retry: 3000\n\nid: 17179869185\nevent: task.created\n" +
      'data: {"id":"17179869185","type":"task.created","occurred_at":"2026-11-25T22:39:57.123Z","agent_id":"…","task_id":"…","data":{"task":{}}}\n\n' +
      ": keep-alive\n\n",
  },
  "x-itemSchema": {
    oneOf: [{ $ref: "#/components/schemas/ChangeEvent" }, z.toJSONSchema(EventGap, { target: "openapi-3.0" })],
  },
};

export const eventsRouter = router({
  list: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/events",
        operationId: "listEvents",
        tags,
        summary: "List events",
        description:
          "Kept events in id order, after `after`. A reader that has seen id N never later sees an event with an id ≤ N, " +
          'so following with `after` misses nothing. `Link: <…?after=LAST…>; rel="next"` when the page was full.',
        protect: false,
        errorResponses: [400],
      },
      responseHeaders: (data, input) => nextPageLink(data as { id: string }[], input as z.input<typeof EventListQuery>),
      scope: "events:read",
    })
    .input(EventListQuery)
    .output(EventList)
    .query(({ ctx, input }) => eventsService.list(ctx.db, ctx.principal.projectId, input)),

  follow: projectProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/events/stream",
        operationId: "streamEvents",
        tags,
        summary: "Follow events as they happen (server-sent events)",
        description:
          "Replays the kept events after the resume point (`Last-Event-ID`, which wins, or `after`), then sends new events " +
          "as they commit on any instance, with no gap and no duplicate. Without a resume point, new events only. " +
          "503 when MAX_STREAMS streams are open. Over tRPC, subscribe to `events.stream` instead.",
        protect: false,
        requestHeaders: z.object({
          "Last-Event-ID": z.string().optional().meta({ description: "The id of the last event received" }),
        }),
        errorResponses: [400],
      },
      stream: "sse",
      streamContent: eventStreamDocument,
      scope: "events:read",
    })
    .input(EventStreamQuery)
    .output(
      z
        .custom<AsyncIterable<ServerSentEvent | ServerSentEvent[]>>(
          (value) => typeof value === "object" && value !== null,
        )
        // Replaced by `streamContent` in the document.
        .meta({ type: "string" }),
    )
    .query(({ ctx, input, signal }) => {
      const header = ctx.req?.headers["last-event-id"];
      // A repeated header arrives as a list, which no event id is.
      const value = Array.isArray(header) ? header.join(", ") : header || undefined;
      const resume = { value, field: "Last-Event-ID" };
      return serverSentEvents(
        eventsService.follow(deps(ctx), ctx.principal.projectId, input, resume, until(ctx, signal)),
      );
    }),

  // Not a generator itself: a refusal (MAX_STREAMS) is thrown before the stream opens.
  stream: projectProcedure
    .meta({ scope: "events:read" })
    .input(EventSubscriptionInput)
    .subscription(({ ctx, input, signal }) => {
      const resume = { value: input.lastEventId, field: "lastEventId" };
      return trackedEvents(eventsService.follow(deps(ctx), ctx.principal.projectId, input, resume, until(ctx, signal)));
    }),
});
