import { measure } from "./load.js";
import type { RunContext } from "./rounds.js";
import { startService } from "./targets.js";

/**
 * Scenario (i): scenario (f)'s mix (20% writes, each recording its event)
 * with 200 event streams open on the same service, against the same mix with
 * none. Reports the write throughput kept and the delivery delay: from the
 * event's `occurred_at` (set in the writing request) to its arrival on a
 * stream, over every event on every stream.
 */
const STREAMS = 200;

const occurredAt = /"occurred_at":"([^"]+)"/;

/** `count` streams on `url`, each recording the delay of every event it gets. */
async function openStreams(url: string, count: number, delays: number[]) {
  const stop = new AbortController();
  const readers = await Promise.all(
    Array.from({ length: count }, async () => {
      const res = await fetch(`${url}/events/stream`, { signal: stop.signal });
      if (res.status !== 200 || !res.body) throw new Error(`stream refused: ${res.status}`);
      // Wrapped: an async function returning the reading promise itself would wait for it to end.
      const reading = (async () => {
        const decoder = new TextDecoder();
        try {
          for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
            const arrived = Date.now();
            for (const match of decoder.decode(chunk, { stream: true }).matchAll(new RegExp(occurredAt, "g"))) {
              delays.push(arrived - Date.parse(match[1] as string));
            }
          }
        } catch {
          // Closed at the end of the run.
        }
      })();
      return { reading };
    }),
  );
  return async () => {
    stop.abort();
    await Promise.all(readers.map((reader) => reader.reading));
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
      const result = await measure(
        target,
        { kind: "mix" },
        { connections: options.connections, duration: options.duration, idsFile: ctx.idsFile },
        options.warmup,
      );
      return { rps: result.rps, errors: result.errors, delays };
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
    `(target ≤ 250 ms), errors ${without.errors} / ${withStreams.errors}.`;
  ctx.log(line);
  return [line];
}
