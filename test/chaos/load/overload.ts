// Many concurrent connections, each a client sending one request after
// another for a while. Connections open over a ramp; only requests sent
// after it count towards latencies, but every request must end in a response.

import { type Call, keepAliveAgent, type Outcome, send } from "./http.js";
import { finish, input, ownLag, percentile, sortedNumbers } from "./ipc.js";

export interface OverloadInput {
  url: string;
  connections: number;
  rampMs: number;
  measureMs: number;
  /** Existing agent ids for GET and PATCH. */
  ids: string[];
  /** Shares of the requests; the rest are GETs. */
  postShare: number;
  patchShare: number;
  /** Connections come from this many loopback addresses, as from that many clients. */
  clients: number;
  /** A request still unanswered after this long is given up (and counted as unanswered). */
  giveUpMs: number;
}

export interface OverloadResult {
  measured: number;
  admitted: number;
  admittedP99: number;
  shed: number;
  shedP99: number;
  shedWithoutRetryAfter: number;
  otherStatuses: Record<string, number>;
  /** Requests (at any time) that ended without a complete response: given up, reset or refused. */
  unanswered: number;
  unansweredReasons: Record<string, number>;
  slowest: number;
  lagP99: number;
}

const options = await input<OverloadInput>();
const lag = ownLag();
const pick = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)] as T;
const clientAddress = (n: number) => `127.10.${Math.floor(n / 200)}.${(n % 200) + 10}`;
let counter = 0;

function nextCall(): Call {
  const roll = Math.random();
  if (roll < options.postShare) {
    return { method: "POST", path: "/agents", body: JSON.stringify({ name: `load-${counter++}`, type: "worker" }) };
  }
  if (roll < options.postShare + options.patchShare) {
    return { method: "PATCH", path: `/agents/${pick(options.ids)}`, body: JSON.stringify({ name: `p-${counter++}` }) };
  }
  return { method: "GET", path: `/agents/${pick(options.ids)}` };
}

const started = Date.now();
const measureFrom = started + options.rampMs;
const endAt = measureFrom + options.measureMs;
// Only what the figures need is kept: a run makes tens of thousands of requests.
const measured: Pick<Outcome, "status" | "ms" | "headers">[] = [];
const unansweredReasons: Record<string, number> = {};
let unanswered = 0;

async function connection(n: number) {
  await new Promise((resolve) => setTimeout(resolve, (n / options.connections) * options.rampMs));
  const agent = keepAliveAgent(1);
  const localAddress = clientAddress(n % options.clients);
  while (Date.now() < endAt) {
    const sentAt = Date.now();
    const outcome = await send(options.url, { ...nextCall(), agent, localAddress, timeoutMs: options.giveUpMs });
    if (outcome.status === 0) {
      unanswered++;
      const reason = outcome.error ?? "unknown";
      unansweredReasons[reason] = (unansweredReasons[reason] ?? 0) + 1;
    }
    if (sentAt >= measureFrom) {
      const retryAfter = outcome.headers["retry-after"];
      measured.push({
        status: outcome.status,
        ms: outcome.ms,
        headers: retryAfter ? { "retry-after": retryAfter } : {},
      });
    }
  }
  agent.destroy();
}

await Promise.all(Array.from({ length: options.connections }, (_, n) => connection(n)));

const answered = measured.filter((o) => o.status !== 0);
const admitted = sortedNumbers(answered.filter((o) => o.status >= 200 && o.status < 300).map((o) => o.ms));
const shed = answered.filter((o) => o.status === 503);
const otherStatuses: Record<string, number> = {};
for (const o of answered) {
  if ((o.status < 200 || o.status >= 300) && o.status !== 503) {
    otherStatuses[o.status] = (otherStatuses[o.status] ?? 0) + 1;
  }
}
const result: OverloadResult = {
  measured: measured.length,
  admitted: admitted.length,
  admittedP99: percentile(admitted, 99),
  shed: shed.length,
  shedP99: percentile(sortedNumbers(shed.map((o) => o.ms)), 99),
  shedWithoutRetryAfter: shed.filter((o) => !o.headers["retry-after"]).length,
  otherStatuses,
  unanswered,
  unansweredReasons,
  slowest: Math.max(0, ...answered.map((o) => o.ms)),
  lagP99: lag.p99Ms(),
};
finish(result);
