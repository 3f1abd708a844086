/** One message of a text/event-stream, as read off the wire. */
export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
  /** When it was read (Date.now()). */
  at: number;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Messages read so far. */
  messages: SseMessage[];
  /** Waits until `count` messages (of those `keep` accepts) were read, and returns them. */
  until: (count: number, keep?: (message: SseMessage) => boolean, timeoutMs?: number) => Promise<SseMessage[]>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close: () => void;
}

const parse = (block: string, at: number): SseMessage => {
  const message: SseMessage = { at };
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) message.comment = line.slice(1).trim();
    const colon = line.indexOf(": ");
    if (colon === -1) continue;
    const name = line.slice(0, colon) as "id" | "event" | "data" | "retry";
    if (["id", "event", "data", "retry"].includes(name)) message[name] = line.slice(colon + 2);
  }
  return message;
};

/** Opens `url` and reads its server-sent events as they come. */
export async function openStream(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const messages: SseMessage[] = [];
  const waiters = new Set<() => void>();
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let text = "";
    try {
      for await (const chunk of res.body) {
        text += decoder.decode(chunk, { stream: true });
        let end = text.indexOf("\n\n");
        while (end !== -1) {
          messages.push(parse(text.slice(0, end), Date.now()));
          text = text.slice(end + 2);
          end = text.indexOf("\n\n");
        }
        for (const wake of waiters) wake();
      }
    } catch {
      // Closed by the test.
    }
    for (const wake of waiters) wake();
  })();
  let done = false;
  void ended.then(() => {
    done = true;
  });
  const until: SseStream["until"] = (count, keep = () => true, timeoutMs = 20_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const kept = messages.filter(keep);
        if (kept.length >= count) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(kept);
        } else if (done) {
          clearTimeout(timer);
          waiters.delete(check);
          reject(new Error(`stream ended after ${kept.length} of ${count} messages`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${messages.filter(keep).length} of ${count} messages within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { status: res.status, headers: res.headers, messages, until, ended, close: () => abort.abort() };
}

/** Only the events of a stream (not its retry, comments or gap). */
export const isEvent = (message: SseMessage) => message.id !== undefined && message.data !== undefined;
