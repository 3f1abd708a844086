import type { ServerResponse } from "node:http";
import { AppError } from "../../errors.js";
import type { ServerSentEvent, ServerSentEvents } from "../../trpc/server-sent-events.js";

export const isEventStream = (value: unknown): value is AsyncIterable<ServerSentEvents> =>
  typeof value === "object" && value !== null && Symbol.asyncIterator in value;

// Line breaks inside a field would end it early: ids and types are single lines.
const field = (name: string, value: string) => `${name}: ${value.replace(/[\r\n]/g, " ")}\n`;

function frame(message: ServerSentEvent): string {
  if (frames.has(message)) return frames.get(message) as string;
  const text = frameOf(message);
  // Messages sent to many streams (an event's) are framed once.
  if ("json" in message) frames.set(message, text);
  return text;
}
const frames = new WeakMap<ServerSentEvent, string>();

function frameOf(message: ServerSentEvent): string {
  if ("comment" in message) return `: ${message.comment.replace(/[\r\n]/g, " ")}\n\n`;
  if ("retry" in message) return `retry: ${Math.round(message.retry)}\n\n`;
  const { id, event } = message;
  const data = message.json ?? JSON.stringify(message.data);
  return `${id === undefined ? "" : field("id", id)}${event === undefined ? "" : field("event", event)}data: ${data}\n\n`;
}

/**
 * Messages written at once, as bytes: made once however many streams write
 * the same messages (the events that arrived together, to every stream that
 * wants them all), so each stream costs one write, not a string and its
 * encoding of its own.
 */
function batchBytes(messages: readonly ServerSentEvent[]): Buffer {
  let bytes = batches.get(messages);
  if (!bytes) {
    bytes = Buffer.from(messages.map(frame).join(""));
    batches.set(messages, bytes);
  }
  return bytes;
}
const batches = new WeakMap<readonly ServerSentEvent[], Buffer>();

/** Resolves when `res` can take more, or is gone; leaves no listener behind either way. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/**
 * Writes a procedure's events as `text/event-stream` until they end or the
 * client leaves, then ends the response. `leave` aborts the procedure's
 * signal, so a stream that waits for new events stops waiting. Back-pressure
 * is kept: a slow client holds the stream at the next event.
 */
export async function writeEventStream(res: ServerResponse, events: unknown, leave: AbortController): Promise<void> {
  if (!isEventStream(events)) throw new AppError("internal_error", "A stream procedure returned no events");
  const iterator = events[Symbol.asyncIterator]();
  const onClose = () => {
    leave.abort();
    void iterator.return?.();
  };
  res.once("close", onClose);
  res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    // Proxies that buffer responses (nginx) would hold the events back.
    "X-Accel-Buffering": "no",
  });
  res.flushHeaders();
  try {
    // HEAD: the stream's status and headers, then the end, and its slot given back.
    if (res.req?.method === "HEAD") {
      leave.abort();
      await iterator.return?.();
      return;
    }
    for (;;) {
      const next = await iterator.next();
      if (next.done || res.destroyed) break;
      const { value } = next;
      // One write for messages that came together: one system call however many events.
      const chunk = Array.isArray(value) ? batchBytes(value) : frame(value as ServerSentEvent);
      if (!res.write(chunk)) await drained(res);
    }
  } finally {
    res.off("close", onClose);
    res.end();
  }
}
