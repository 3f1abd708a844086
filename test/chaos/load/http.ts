// A small HTTP client for the load generators: node:http, one outcome per
// request (a complete response or the error that ended it), timed.
import { Agent, type IncomingHttpHeaders, request } from "node:http";

export interface Outcome {
  /** 0 when no complete response arrived. */
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** From sending the request to the end of the response (or the error). */
  ms: number;
  /** When the response head arrived (ms since the epoch); 0 without one. */
  headAt: number;
  /** The error code that ended the request without a complete response (ECONNRESET, ECONNREFUSED, timeout, …). */
  error?: string;
}

export interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Source address to connect from, e.g. 127.0.0.7: another client, as the server sees it. */
  localAddress?: string;
  agent?: Agent | false;
  timeoutMs?: number;
  /** Called once the whole request has been handed to the connection (so it is connected, and on its way). */
  onSent?: () => void;
}

export function keepAliveAgent(maxSockets: number) {
  return new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

export function send(base: string, call: Call): Promise<Outcome> {
  const url = new URL(base);
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let headAt = 0;
    let deadline: NodeJS.Timeout | undefined;
    const done = (outcome: Omit<Outcome, "ms" | "headAt">) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...outcome, headAt, ms: performance.now() - started });
    };
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: call.method,
        path: call.path,
        localAddress: call.localAddress,
        agent: call.agent,
        headers: {
          ...(call.body !== undefined ? { "content-type": "application/json" } : {}),
          ...call.headers,
        },
      },
      (res) => {
        headAt = Date.now();
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        const body = () => Buffer.concat(chunks).toString("utf8");
        // `complete` is false when the connection ended before the whole body arrived.
        const cutOff = () => done({ status: 0, headers: res.headers, body: body(), error: "CUT_OFF_MID_RESPONSE" });
        res.on("end", () =>
          res.complete ? done({ status: res.statusCode ?? 0, headers: res.headers, body: body() }) : cutOff(),
        );
        res.on("error", cutOff);
        res.on("close", () => (res.complete ? undefined : cutOff()));
      },
    );
    // A deadline for the whole exchange, connecting included (req.setTimeout starts only once connected).
    deadline = setTimeout(() => {
      done({
        status: 0,
        headers: {},
        body: "",
        error: `TIMEOUT reused=${req.reusedSocket} connecting=${req.socket?.connecting} written=${req.socket?.bytesWritten} read=${req.socket?.bytesRead} head=${headAt > 0}`,
      });
      req.destroy();
    }, call.timeoutMs ?? 30_000);
    req.on("error", (error: NodeJS.ErrnoException) =>
      done({ status: 0, headers: {}, body: "", error: error.code ?? error.message }),
    );
    if (call.onSent) req.once("finish", call.onSent);
    req.end(call.body);
  });
}
