// Many concurrent connections, each a client sending one request after
// another for a while, and waiting as told (Retry-After, at most 1 s) after a
// 503, as a well-behaved client does. Connections open over a ramp; only
// requests sent after it count towards latencies, but every request must end
// in a response within the given time.
import { type Answer, Connection } from "./connection.js";
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
const url = new URL(options.url);
const lag = ownLag();
const pick = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)] as T;
const clientAddress = (n: number) => `127.10.${Math.floor(n / 200)}.${(n % 200) + 10}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let counter = 0;

function nextCall(): [method: string, path: string, body?: string] {
  const roll = Math.random();
  if (roll < options.postShare)
    return ["POST", "/agents", JSON.stringify({ name: `load-${counter++}`, type: "worker" })];
  if (roll < options.postShare + options.patchShare) {
    return ["PATCH", `/agents/${pick(options.ids)}`, JSON.stringify({ name: `p-${counter++}` })];
  }
  return ["GET", `/agents/${pick(options.ids)}`];
}

const started = Date.now();
const measureFrom = started + options.rampMs;
const endAt = measureFrom + options.measureMs;
const measured: Answer[] = [];
const unansweredReasons: Record<string, number> = {};
let unanswered = 0;

async function client(n: number) {
  await sleep((n / options.connections) * options.rampMs);
  const connection = new Connection(url.hostname, Number(url.port), clientAddress(n % options.clients));
  while (Date.now() < endAt) {
    const sentAt = Date.now();
    const [method, path, body] = nextCall();
    const answer = await connection.request(method, path, body, options.giveUpMs);
    if (answer.status === 0) {
      unanswered++;
      const reason = answer.error ?? "unknown";
      unansweredReasons[reason] = (unansweredReasons[reason] ?? 0) + 1;
    }
    if (sentAt >= measureFrom) measured.push(answer);
    if (answer.status === 503) await sleep(Math.min(1000, 1000 * (Number(answer.retryAfter) || 1)));
    else if (answer.status === 0) await sleep(100); // a connection that failed is not retried in a spin
  }
  connection.close();
}

await Promise.all(Array.from({ length: options.connections }, (_, n) => client(n)));

const answered = measured.filter((a) => a.status !== 0);
const admitted = sortedNumbers(answered.filter((a) => a.status >= 200 && a.status < 300).map((a) => a.ms));
const shed = answered.filter((a) => a.status === 503);
const otherStatuses: Record<string, number> = {};
for (const a of answered) {
  if ((a.status < 200 || a.status >= 300) && a.status !== 503)
    otherStatuses[a.status] = (otherStatuses[a.status] ?? 0) + 1;
}
const result: OverloadResult = {
  measured: measured.length,
  admitted: admitted.length,
  admittedP99: percentile(admitted, 99),
  shed: shed.length,
  shedP99: percentile(sortedNumbers(shed.map((a) => a.ms)), 99),
  shedWithoutRetryAfter: shed.filter((a) => !a.retryAfter).length,
  otherStatuses,
  unanswered,
  unansweredReasons,
  slowest: answered.reduce((most, a) => Math.max(most, a.ms), 0),
  lagP99: lag.p99Ms(),
};
finish(result);
