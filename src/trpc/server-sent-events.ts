/**
 * One message of a `stream: "sse"` procedure
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html): an
 * event, a comment (which clients ignore: a keep-alive), or the delay a
 * client waits before it reconnects.
 */
export type ServerSentEvent =
  | {
      /** Becomes the client's `Last-Event-ID` when it reconnects. */
      id?: string;
      /** The event's type; `message` when absent. */
      event?: string;
      /** Sent as one line of JSON … */
      data: unknown;
      /** … or this JSON text (one line), when the caller has it already. */
      json?: undefined;
    }
  | { id?: string; event?: string; json: string; data?: undefined }
  | { comment: string }
  | { retry: number };

/** What a stream procedure yields: one message, or several written at once. */
export type ServerSentEvents = ServerSentEvent | readonly ServerSentEvent[];
