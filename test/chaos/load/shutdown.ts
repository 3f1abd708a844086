// Clients of a service that is about to get SIGTERM: keep-alive clients
// idle on open connections, and a burst of requests in flight (some still
// uploading their body). Every request must end in a complete response, or
// in a refused connection; never in a reset or a response cut off.
// No new connections are opened after the signal: one that reaches the
// kernel's accept queue just before the listener closes is reset by the
// kernel whatever the service does, so it would make the test flaky, not strict.
import { Agent, request } from "node:http";
import { keepAliveAgent, type Outcome, send } from "./http.js";
import { finish, input, next, send as tell } from "./ipc.js";

interface Input {
  url: string;
  keepAliveClients: number;
  inFlight: number;
  /** How many of the in-flight requests are POSTs whose body is completed only after the signal. */
  slowBodies: number;
  /** The in-flight GETs ask for pages this long: work enough to keep them in flight at the signal. */
  pageSize: number;
}

export interface ShutdownResult {
  requests: number;
  inFlightAtSignal: number;
  complete: number;
  refused: number;
  /** Ended by a reset, a hang-up or a cut-off body: lost. */
  lost: number;
  lostReasons: Record<string, number>;
  statuses: Record<string, number>;
  /** Every complete response: when its head arrived (ms since the epoch), and whether it said `Connection: close`. */
  heads: { at: number; close: boolean }[];
}

const options = await input<Input>();
const url = new URL(options.url);
type Group = "in flight" | "keep-alive";
const outcomes: (Outcome & { group: Group })[] = [];
let outstanding = 0;
const track = (group: Group, promise: Promise<Outcome>) => {
  outstanding++;
  return promise.then((outcome) => {
    outstanding--;
    outcomes.push({ ...outcome, group });
    return outcome;
  });
};

// 1. Keep-alive clients, each with one idle connection after a first request.
const keepAlive = Array.from({ length: options.keepAliveClients }, () => keepAliveAgent(1));
await Promise.all(keepAlive.map((agent) => send(options.url, { method: "GET", path: "/agents?limit=1", agent })));
tell({ type: "ready" });
await next("fire");

// 2. The burst: each request on a connection of its own, which the client would like to keep.
const burst = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
const pending: Promise<Outcome>[] = [];
const finishBodies: (() => void)[] = [];
const heads: Promise<void>[] = [];
for (let i = 0; i < options.inFlight; i++) {
  if (i < options.slowBodies) {
    const body = JSON.stringify({ name: `draining-${i}`, type: "worker" });
    const half = Math.floor(body.length / 2);
    let onSent!: () => void;
    heads.push(new Promise((resolve) => (onSent = resolve)));
    pending.push(track("in flight", upload(body, half, onSent)));
  } else {
    let onSent!: () => void;
    heads.push(new Promise((resolve) => (onSent = resolve)));
    const path = `/agents?limit=${options.pageSize}`;
    pending.push(track("in flight", send(options.url, { method: "GET", path, agent: burst, onSent })));
  }
}
// Signalled only once every request is on the wire: then each one really is in flight.
await Promise.all(heads);
tell({ type: "fired" });

// 3. The signal was sent. The uploads finish a second later, so the service is still draining
// then (a service that waits for its in-flight requests cannot be done before). Meanwhile
// the keep-alive clients send their next request on their open connection, one every 5 ms:
// some before the service has even handled the signal, the rest while it drains.
await next("signalled");
const inFlightAtSignal = outstanding;
setTimeout(() => {
  for (const complete of finishBodies) complete();
}, 1000);
for (const [i, agent] of keepAlive.entries()) {
  const sent = new Promise((resolve) => setTimeout(resolve, i * 5)).then(() =>
    send(options.url, { method: "GET", path: "/agents?limit=1", agent, timeoutMs: 20_000 }),
  );
  pending.push(track("keep-alive", sent));
}
await Promise.all(pending);

/** A POST whose first part is sent now and the rest when the test has signalled the service. */
function upload(body: string, half: number, onSent: () => void): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let headAt = 0;
    const done = (outcome: Omit<Outcome, "ms" | "headAt">) => {
      if (settled) return;
      settled = true;
      resolve({ ...outcome, headAt, ms: performance.now() - started });
    };
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: "/agents",
        agent: burst,
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        headAt = Date.now();
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        const cutOff = () => done({ status: 0, headers: res.headers, body: "", error: "CUT_OFF_MID_RESPONSE" });
        res.on("end", () =>
          res.complete
            ? done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() })
            : cutOff(),
        );
        res.on("error", cutOff);
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) =>
      done({ status: 0, headers: {}, body: "", error: error.code ?? error.message }),
    );
    req.setTimeout(20_000, () => {
      done({ status: 0, headers: {}, body: "", error: "TIMEOUT" });
      req.destroy();
    });
    req.write(body.slice(0, half), () => onSent());
    finishBodies.push(() => req.end(body.slice(half)));
  });
}

for (const agent of [...keepAlive, burst]) agent.destroy();
const lostReasons: Record<string, number> = {};
const statuses: Record<string, number> = {};
let complete = 0;
let refused = 0;
for (const outcome of outcomes) {
  if (outcome.status > 0) {
    complete++;
    statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
  } else if (outcome.error === "ECONNREFUSED") {
    refused++;
  } else {
    const reason = `${outcome.group}: ${outcome.error ?? "unknown"}`;
    lostReasons[reason] = (lostReasons[reason] ?? 0) + 1;
  }
}
const result: ShutdownResult = {
  requests: outcomes.length,
  inFlightAtSignal,
  complete,
  refused,
  lost: outcomes.length - complete - refused,
  lostReasons,
  statuses,
  // Which of them the service made while draining, the test tells from the time it logged the signal.
  heads: outcomes
    .filter((o) => o.status > 0)
    .map((o) => ({ at: o.headAt, close: o.headers.connection?.toLowerCase() === "close" })),
};
finish(result);
