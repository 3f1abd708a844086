import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedRequest {
  method: string;
  path: string;
  /** The request's body, parsed ("" when there was none). */
  body: unknown;
}

export interface ProxyAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

type Intercepted = ProxyAnswer | "drop" | undefined;

export interface LoggedExchange extends ProxiedRequest {
  /** What the client got: the service's status, the proxy's own, or 0 for a dropped connection. */
  status: number;
  answered: unknown;
  /** performance.now() when the request came and when it was answered. */
  sentAt: number;
  answeredAt: number;
  /** Answered by the proxy, not the service. */
  intercepted: boolean;
}

export interface HttpProxy {
  baseUrl: string;
  /** Every exchange, in the order the answers went out. */
  log: LoggedExchange[];
  /**
   * Set by a test to answer a request itself (a 503) instead of passing it
   * on: return undefined to pass it on, "drop" to close the connection
   * without an answer, or a promise that never settles to hang it.
   */
  intercept: (request: ProxiedRequest) => Intercepted | Promise<Intercepted>;
  close: () => Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const parsed = (text: string): unknown => (text === "" ? "" : JSON.parse(text));

/**
 * A proxy in front of the service at `target`, between it and the client
 * under test: what a client does on a 429, a 503 or a lost connection is
 * tested without making the service misbehave. A client that leaves cancels
 * the request passed on, as it would have without the proxy.
 */
export async function startProxy(target: string): Promise<HttpProxy> {
  const proxy: HttpProxy = {
    baseUrl: "",
    log: [],
    intercept: () => undefined,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer(async (req, res) => {
    const sentAt = performance.now();
    const text = await bodyOf(req);
    const request = { method: req.method ?? "GET", path: req.url ?? "/", body: parsed(text) };
    const left = new AbortController();
    res.on("close", () => left.abort());
    const record = (status: number, answered: unknown, intercepted: boolean) =>
      proxy.log.push({ ...request, status, answered, sentAt, answeredAt: performance.now(), intercepted });
    try {
      const own = await proxy.intercept(request);
      if (own === "drop") {
        record(0, undefined, true);
        res.destroy();
        return;
      }
      if (own) {
        const body = own.body === undefined ? "" : JSON.stringify(own.body);
        record(own.status, own.body, true);
        res.writeHead(own.status, { "content-type": "application/json", ...own.headers }).end(body);
        return;
      }
      const upstream = await fetch(`${target}${request.path}`, {
        method: request.method,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(
            (entry): entry is [string, string] =>
              typeof entry[1] === "string" && !["host", "connection", "content-length"].includes(entry[0]),
          ),
        ),
        body: text === "" ? null : text,
        signal: left.signal,
      });
      const answer = await upstream.text();
      record(upstream.status, answer === "" ? "" : parsed(answer), false);
      const headers = Object.fromEntries(
        [...upstream.headers].filter(([name]) => !["content-length", "transfer-encoding", "connection"].includes(name)),
      );
      res.writeHead(upstream.status, headers).end(answer);
    } catch {
      // The client left while its request was passed on: nobody to answer.
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
