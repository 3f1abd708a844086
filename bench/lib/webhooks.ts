import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { type LoadResult, measure } from "./load.js";
import type { RunContext } from "./rounds.js";
import { pool } from "./seed.js";
import { startService } from "./targets.js";

/**
 * Scenario (j): webhook delivery under load. Three endpoints subscribe to
 * `agent.created` (two answer at once, one after 2 s); 10,000 agents are
 * created, then (f)'s mix runs while the deliveries go out. Reported: how
 * fast the two quick endpoints get their deliveries, and (f) against (f) on
 * the same data with no webhook at all.
 */
export const webhookEvents = 10_000;
const slowAnswerMs = 2_000;
// How long the quick endpoints are given to receive every event.
const DRAIN_TIMEOUT_MS = 300_000;

export interface WebhookBench {
  events: number;
  /** Deliveries to the two quick endpoints per second, from the first event until both had every event. */
  deliveredPerSecond: number;
  seconds: number;
  /** Whether both quick endpoints got every event within the drain timeout. */
  drained: boolean;
  /** Deliveries to the quick endpoints still owed when (f) started (of the setup's events). */
  backlogAtMix: number;
  /** Deliveries to the quick endpoints per second while (f) ran (its warm-up included). */
  deliveredPerSecondDuringMix: number;
  slowDelivered: number;
  mixWithout: LoadResult;
  mixWith: LoadResult;
}

interface Endpoint {
  url: string;
  count: number;
  server: Server;
}

async function endpoint(delayMs: number): Promise<Endpoint> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      ep.count++;
      const answer = () => res.writeHead(204).end();
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  const ep: Endpoint = { url: "", count: 0, server };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  ep.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return ep;
}

/**
 * The setup's connections to the service. The service closes a connection idle for
 * KEEP_ALIVE_TIMEOUT_SECONDS (5 s); a POST sent on one just as it closes is lost with a reset,
 * and a POST is not retried (it may have been served). Idle for 1 s, a connection is closed here
 * first, so a reused one is never one the service is closing, even when its event loop runs late.
 */
const setupAgent = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

/** A setup request; a 503 (load shed while deliveries run) is tried again after its Retry-After. */
async function post(url: string, path: string, body: unknown): Promise<void> {
  for (;;) {
    const res = await request(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      dispatcher: setupAgent,
    });
    await res.body.dump();
    if (res.statusCode === 201) return;
    if (res.statusCode !== 503) throw new Error(`(j): POST ${path} answered ${res.statusCode}`);
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers["retry-after"] ?? 1) * 1000));
  }
}

const mixOptions = (ctx: RunContext) => ({
  connections: ctx.options.connections,
  duration: ctx.options.duration,
  idsFile: ctx.idsFile,
});

export async function webhookBench(ctx: RunContext): Promise<WebhookBench> {
  const { log } = ctx;
  const plain = await startService("webhooks-without", {
    databaseUrl: await ctx.dbs.copy(ctx.template, "webhooks_without"),
    logFile: ctx.logFile,
  });
  const mixWithout = await measure(plain, { kind: "mix" }, mixOptions(ctx), ctx.options.warmup);
  await plain.stop();

  const endpoints = [await endpoint(0), await endpoint(0), await endpoint(slowAnswerMs)];
  const target = await startService("webhooks-with", {
    databaseUrl: await ctx.dbs.copy(ctx.template, "webhooks_with"),
    logFile: ctx.logFile,
    env: { WEBHOOK_ALLOW_PRIVATE: "true" },
  });
  try {
    for (const ep of endpoints) await post(target.url, "/webhooks", { url: ep.url, types: ["agent.created"] });
    log(`${ctx.dbs.provider}: (j) creating ${webhookEvents} agents for 3 webhook endpoints`);
    const started = performance.now();
    await pool([...Array(webhookEvents).keys()], 16, (i) =>
      post(target.url, "/agents", { name: `hooked-${i}`, type: "worker" }),
    );
    const [quickA, quickB, slow] = endpoints as [Endpoint, Endpoint, Endpoint];
    const quickCount = () => quickA.count + quickB.count;
    const beforeMix = { count: quickCount(), at: performance.now() };
    const mixWith = await measure(target, { kind: "mix" }, mixOptions(ctx), ctx.options.warmup);
    const deliveredPerSecondDuringMix = ((quickCount() - beforeMix.count) * 1000) / (performance.now() - beforeMix.at);
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while ((quickA.count < webhookEvents || quickB.count < webhookEvents) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    const drained = quickA.count >= webhookEvents && quickB.count >= webhookEvents;
    const result = {
      events: webhookEvents,
      deliveredPerSecond: (quickA.count + quickB.count) / seconds,
      seconds,
      drained,
      backlogAtMix: Math.max(0, 2 * webhookEvents - beforeMix.count),
      deliveredPerSecondDuringMix,
      slowDelivered: slow.count,
      mixWithout,
      mixWith,
    };
    log(
      `${ctx.dbs.provider} (j): ${result.deliveredPerSecond.toFixed(0)} deliveries/s to the quick endpoints over ${seconds.toFixed(1)} s (drained: ${drained}), ${deliveredPerSecondDuringMix.toFixed(0)}/s during (f) with ${result.backlogAtMix} owed at its start, slow endpoint ${slow.count}; (f) ${mixWith.rps.toFixed(0)} req/s with deliveries vs ${mixWithout.rps.toFixed(0)} without`,
    );
    return result;
  } finally {
    await target.stop();
    for (const ep of endpoints) {
      ep.server.closeAllConnections();
      ep.server.close();
    }
  }
}

/** The report's section for (j). */
export function webhookReport(bench: WebhookBench | undefined): string[] {
  if (!bench) return [];
  const ratio = bench.mixWith.rps / bench.mixWithout.rps;
  return [
    `### (j) Webhooks (${bench.events.toLocaleString("en")} events to 3 endpoints, one answering after ${slowAnswerMs / 1000} s)`,
    "",
    "| run | value |",
    "|---|---|",
    `| deliveries/s to the two quick endpoints | ${bench.deliveredPerSecond.toFixed(0)} over ${bench.seconds.toFixed(1)} s${bench.drained ? "" : " (**not drained**)"} |`,
    `| deliveries/s to the quick endpoints while (f) ran; owed at its start | ${bench.deliveredPerSecondDuringMix.toFixed(0)}; ${bench.backlogAtMix} |`,
    `| deliveries to the slow endpoint meanwhile | ${bench.slowDelivered} |`,
    `| (f) req/s while delivering / without webhooks | ${bench.mixWith.rps.toFixed(0)} / ${bench.mixWithout.rps.toFixed(0)} (p99 ${bench.mixWith.p99} / ${bench.mixWithout.p99} ms) |`,
    "",
    `- (f) keeps ${ratio.toFixed(2)}× of its throughput while deliveries run; target ≥ 0.8×: ${ratio >= 0.8 ? "met" : "**missed**"}`,
    "",
  ];
}
