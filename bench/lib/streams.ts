import { Agent, get as httpGet } from "node:http";
import { connect } from "node:net";
import { measure } from "./load.js";
import type { RunContext } from "./rounds.js";
import { startService } from "./targets.js";

/**
 * Scenario (i): scenario (f)'s mix (20% writes, each recording its event)
 * with 200 event streams open on the same service, against the same mix with
 * none. Reports the write throughput kept and the delivery delay: from the
 * event's `occurred_at` (set in the writing request) to its arrival on a
 * stream, over every event on one stream in ten.
 */
const STREAMS = 200;
/** One stream in this many measures delivery delays (each event's; a chunk may split one, rarely). */
const SAMPLE_EVERY = 10;

const occurredAt = /"occurred_at":"([^"]+)"/;

/** What a stream's reader leaves to close it. */
interface OpenStream {
  destroy(): void;
  ended: Promise<void>;
}

/**
 * A stream read with node:http (far cheaper per chunk than fetch's web
 * streams), recording the delay of every event it gets.
 */
function sampledStream(url: string, agent: Agent, delays: number[]): Promise<OpenStream> {
  return new Promise((opened, failed) => {
    const req = httpGet(`${url}/events/stream`, { agent }, (res) => {
      if (res.statusCode !== 200) return failed(new Error(`stream refused: ${res.statusCode}`));
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const arrived = Date.now();
        for (const match of chunk.matchAll(new RegExp(occurredAt, "g"))) {
          delays.push(arrived - Date.parse(match[1] as string));
        }
      });
      opened({ destroy: () => req.destroy(), ended: new Promise((done) => res.once("close", () => done())) });
    });
    req.once("error", failed);
  });
}

// The bytes of the streams that only take them in, read into one buffer over and over.
const discarded = Buffer.allocUnsafe(64 * 1024);

/**
 * A stream that only takes the bytes in: its status line checked, then read
 * off the socket into one reused buffer, with no HTTP parsing and no buffer
 * per read. The service writes and the kernel carries exactly what a parsing
 * client would get; the readers share the 2 cores with the service, so what
 * they would spend parsing would count against the service.
 */
function drainedStream(url: string): Promise<OpenStream> {
  const { hostname, port } = new URL(url);
  return new Promise((opened, failed) => {
    let head: string | undefined = "";
    const socket = connect({
      host: hostname,
      port: Number(port),
      onread: {
        buffer: discarded,
        callback: (length) => {
          if (head === undefined) return true;
          head += discarded.toString("latin1", 0, length);
          if (!head.includes("\r\n\r\n")) return true;
          if (head.startsWith("HTTP/1.1 200 ")) {
            opened({
              destroy: () => socket.destroy(),
              ended: new Promise((done) => socket.once("close", () => done())),
            });
          } else {
            socket.destroy();
            failed(new Error(`stream refused: ${head.slice(0, head.indexOf("\r\n"))}`));
          }
          head = undefined;
          return true;
        },
      },
    });
    socket.once("error", failed);
    socket.write(`GET /events/stream HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
  });
}

/**
 * `count` streams on `url`. One stream in `SAMPLE_EVERY` records the delay of
 * every event it gets; the others only take the bytes in.
 */
async function openStreams(url: string, count: number, delays: number[]) {
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const streams = await Promise.all(
    Array.from({ length: count }, (_, n) =>
      n % SAMPLE_EVERY === 0 ? sampledStream(url, agent, delays) : drainedStream(url),
    ),
  );
  return async () => {
    for (const stream of streams) stream.destroy();
    await Promise.all(streams.map((stream) => stream.ended));
    agent.destroy();
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

async function run(ctx: RunContext, streams: number) {
  const url = await ctx.dbs.copy(ctx.template, `streams_${streams}`);
  const target = await startService(`streams-${streams}`, {
    databaseUrl: url,
    logFile: ctx.logFile,
    // The streams and the load come from one loopback address: more than one client's connection cap.
    env: { MAX_CONNECTIONS_PER_CLIENT: String(STREAMS + 2 * ctx.options.connections) },
  });
  const delays: number[] = [];
  try {
    const close = streams > 0 ? await openStreams(target.url, streams, delays) : async () => {};
    try {
      const { options } = ctx;
      let readerCpu = process.cpuUsage();
      const result = await measure(
        target,
        { kind: "mix" },
        { connections: options.connections, duration: options.duration, idsFile: ctx.idsFile },
        options.warmup,
        () => {
          readerCpu = process.cpuUsage();
        },
      );
      readerCpu = process.cpuUsage(readerCpu);
      // This process reads the streams: its CPU during the measured part is what the readers took from the machine.
      const readerShare = (readerCpu.user + readerCpu.system) / 1e6 / options.duration;
      return { rps: result.rps, errors: result.errors, cpuPerRequest: result.cpuPerRequest, readerShare, delays };
    } finally {
      await close();
    }
  } finally {
    await target.stop();
  }
}

/** Runs (i) and returns its lines for the report's notes. */
export async function streamBench(ctx: RunContext): Promise<string[]> {
  ctx.log(`${ctx.dbs.provider}: (i) scenario (f) without streams, then with ${STREAMS} open`);
  const without = await run(ctx, 0);
  const withStreams = await run(ctx, STREAMS);
  const ratio = withStreams.rps / without.rps;
  const p50 = percentile(withStreams.delays, 50);
  const p99 = percentile(withStreams.delays, 99);
  const line =
    `(i) ${STREAMS} open event streams during (f): ${withStreams.rps.toFixed(0)} req/s against ${without.rps.toFixed(0)} without ` +
    `(${ratio.toFixed(2)}×; target ≥ 0.8×), ${withStreams.delays.length} deliveries, delay p50 ${p50} ms, p99 ${p99} ms ` +
    `(target ≤ 250 ms), errors ${without.errors} / ${withStreams.errors}; ` +
    `server CPU per request ${withStreams.cpuPerRequest.toFixed(0)} against ${without.cpuPerRequest.toFixed(0)} µs, ` +
    `the bench process (the readers) ${(withStreams.readerShare * 100).toFixed(0)}% of a core against ${(without.readerShare * 100).toFixed(0)}%.`;
  ctx.log(line);
  return [line];
}
