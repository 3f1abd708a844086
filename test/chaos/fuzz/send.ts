// Sends a fuzz request (ids resolved against what exists now) and reads the
// whole response. Plain node:http, so nothing is normalised on the way out.
import { Agent, type IncomingHttpHeaders, request } from "node:http";
import { connect } from "node:net";
import type { IdPool } from "./pool.js";
import { type FuzzRequest, Ref } from "./request.js";

export interface Observed {
  /** 0 when no response came. */
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** What ended the request without a response: a reset, a refused connection, a timeout. */
  error?: string;
  /**
   * A server-sent event stream, which never ends by design: closed here once
   * its first message arrived (or `firstMessageMs` passed); `body` holds what
   * had arrived by then.
   */
  stream?: true;
}

/** docs/api/events.md: a stream's first message (`retry: 3000`) is written as it opens. */
const firstMessageMs = 5000;

const oversize = () => JSON.stringify({ name: "x".repeat(1024 * 1024 + 16), type: "worker", title: "t" });

function encodeJson(value: unknown, pool: IdPool): string {
  return JSON.stringify(value, (_key, v: unknown) => (v instanceof Ref ? pool.resolve(v) : v)) ?? "";
}

export function targetOf(fuzz: FuzzRequest, pool: IdPool): string {
  const path = fuzz.path.map((segment) => (segment instanceof Ref ? pool.resolve(segment) : segment)).join("/");
  const query = fuzz.query
    .map((part) =>
      typeof part === "string" ? part : `${part.name}=${encodeURIComponent(encodeJson(part.json, pool))}`,
    )
    .join("&");
  return `/${path}${query ? `?${query}` : ""}`;
}

function bodyOf(fuzz: FuzzRequest, pool: IdPool): Buffer | undefined {
  const body = fuzz.body;
  if (!body) return undefined;
  if (body.kind === "json") return Buffer.from(encodeJson(body.value, pool));
  if (body.kind === "text") return Buffer.from(body.text);
  if (body.kind === "bytes") return body.bytes;
  return Buffer.from(oversize());
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

// Longer than any wait a request may ask for (a lease's `wait_seconds` is at most 20).
export function send(base: URL, fuzz: FuzzRequest, pool: IdPool, timeoutMs = 30_000): Promise<Observed> {
  if (fuzz.raw !== undefined) return sendRaw(base, fuzz.raw, timeoutMs);
  const body = bodyOf(fuzz, pool);
  return new Promise((resolve) => {
    let settled = false;
    const done = (observed: Observed) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(observed);
    };
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method: fuzz.method,
        path: targetOf(fuzz, pool),
        agent,
        headers: { ...fuzz.headers, ...(body ? { "content-length": String(body.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        const text = () => Buffer.concat(chunks).toString("utf8");
        const stream = res.statusCode === 200 && /^text\/event-stream/i.test(res.headers["content-type"] ?? "");
        const closeStream = () => {
          clearTimeout(waited);
          done({ status: 200, headers: res.headers, body: text(), stream: true });
          req.destroy();
        };
        const waited = stream ? setTimeout(closeStream, firstMessageMs) : undefined;
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          if (stream && text().includes("\n\n")) closeStream();
        });
        res.on("end", () => {
          clearTimeout(waited);
          done({
            status: res.complete ? (res.statusCode ?? 0) : 0,
            headers: res.headers,
            body: text(),
            error: res.complete ? undefined : "response cut off",
          });
        });
        res.on("error", (error: NodeJS.ErrnoException) => {
          clearTimeout(waited);
          done({ status: 0, headers: res.headers, body: "", error: error.code ?? error.message });
        });
      },
    );
    const timer = setTimeout(() => {
      done({ status: 0, headers: {}, body: "", error: `no response within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on("error", (error: NodeJS.ErrnoException) =>
      done({ status: 0, headers: {}, body: "", error: error.code ?? error.message }),
    );
    req.end(body);
  });
}

/** A request line no HTTP client library would send, over a bare socket; only the status line is read. */
function sendRaw(base: URL, raw: string, timeoutMs: number): Promise<Observed> {
  return new Promise((resolve) => {
    const socket = connect({ host: base.hostname, port: Number(base.port) });
    let received = "";
    const finish = (error?: string) => {
      clearTimeout(timer);
      socket.destroy();
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(received)?.[1] ?? 0);
      resolve({ status, headers: {}, body: received, error: status ? undefined : error });
    };
    const timer = setTimeout(() => finish(`no response within ${timeoutMs} ms`), timeoutMs);
    socket.on("connect", () => socket.write(raw));
    socket.on("data", (chunk) => {
      received += chunk;
      // The status line is all that is checked; the connection may well stay open after it.
      if (received.includes("\r\n")) finish();
    });
    socket.on("end", () => finish("closed without a response"));
    socket.on("error", (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
  });
}
