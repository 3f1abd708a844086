// Scenario 5: tRPC batches are bounded. A batch over the limit is refused
// with a 4xx and creates nothing; a GET batch of 450 × agents.list?limit=1000
// neither stalls the service for another client nor balloons its memory.
// Scenario 8: one request batching 1,100 procedure names does not flood the log.
import { request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, describe, it } from "vitest";
import { createAgents } from "./harness/agents.js";
import { type ChaosDatabase, providers } from "./harness/databases.js";
import { changedTables, digester } from "./harness/digest.js";
import { figures } from "./harness/figures.js";
import { logLinesFrom, settledLogSize } from "./harness/logs.js";
import { scenarioResources } from "./harness/scenario.js";
import type { Service } from "./harness/service.js";
import type { SteadyResult } from "./load/steady-client.js";

/** The service's batch limit (the issue suggests 20); a batch of one more must be refused. */
const batchLimit = Number(process.env.CHAOS_BATCH_LIMIT ?? 20);
const otherClientP99Ms = 500;
const memoryGrowthMiB = 100;
const stack = /"stack"|\\n\s+at /;

/** GET through node:http, which sends the path exactly as given; counts the body's bytes without keeping them. */
function download(service: Service, path: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: service.port, path, agent: false }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

const createBatch = async (url: string, size: number) => {
  const names = Array.from({ length: size }, () => "agents.create").join(",");
  const body = Object.fromEntries(
    Array.from({ length: size }, (_, i) => [String(i), { name: `batched-${i}`, type: "worker" }]),
  );
  const response = await fetch(`${url}/trpc/${names}?batch=1`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
};

describe.each(providers)("tRPC batches on %s", (provider) => {
  const resources = scenarioResources("describe");
  let database: ChaosDatabase;
  let service: Service;
  let ids: string[];

  beforeAll(async () => {
    database = await resources.database(provider, "batches");
    service = await resources.service({ databaseUrl: database.url, label: `batches-${provider}` });
    ids = await createAgents(service.url, 1000, "listed");
  });

  it(`a batch of ${batchLimit + 1} or of 1,100 creates is refused with a 4xx and creates nothing`, async (context) => {
    const f = figures(context, "5 tRPC batches", provider);
    const digests = await digester(database);
    try {
      for (const size of [batchLimit + 1, 1100]) {
        const before = await digests.digest();
        const status = await createBatch(service.url, size);
        const changed = changedTables(before, await digests.digest());
        const label = `${size.toLocaleString("en-US")} creates in one batch`;
        f.within(`${label}: HTTP status`, status, 400, 499);
        f.atMost(`${label}: tables changed`, changed.length, 0);
      }
    } finally {
      await digests.close();
    }
    f.check();
  });

  it("a GET batch of 450 × agents.list?limit=1000 does not stall another client or balloon memory", async (context) => {
    const f = figures(context, "5 tRPC batches", provider);
    const names = Array.from({ length: 450 }, () => "agents.list").join(",");
    const input = Object.fromEntries(Array.from({ length: 450 }, (_, i) => [String(i), { limit: 1000 }]));
    // JSON left as is in the query (as curl sends it), so the request line stays under Node's 16 KiB limit.
    const path = `/trpc/${names}?batch=1&input=${JSON.stringify(input)}`;

    const other = resources.load("steady-client", {
      url: service.url,
      ratePerSecond: 100,
      durationMs: 60_000,
      timeoutMs: 30_000,
      calls: ids.slice(0, 50).map((id) => ({ method: "GET", path: `/agents/${id}` })),
    });
    await other.next("started");
    await sleep(500); // a baseline before the batch
    const rssBefore = service.rssMiB();
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, service.rssMiB());
    }, 25);
    const started = performance.now();
    const response = await download(service, path);
    const took = performance.now() - started;
    await sleep(1000); // and after it, while the service digests what it did
    clearInterval(sampler);
    other.send({ type: "stop" });
    const { result } = await other.next<{ type: "result"; result: SteadyResult }>("result");

    f.info("450-call batch: HTTP status", response.status);
    f.info("450-call batch: response MiB", response.bytes / 2 ** 20);
    f.info("450-call batch: ms to answer", took);
    f.info("other client requests (100/s)", result.requests);
    f.atMost("other client p99 ms during the batch", result.p99, otherClientP99Ms);
    f.atMost("service memory growth MiB", rssPeak - rssBefore, memoryGrowthMiB);
    f.check();
  });

  it("one request batching 1,100 procedure names writes at most 2 log lines, none with a stack", async (context) => {
    const f = figures(context, "8 log flooding", provider);
    const names = Array.from({ length: 1100 }, () => "agents.create").join(",");
    const from = await settledLogSize(service);
    // Mutations by GET: each of the 1,100 calls is refused.
    const response = await fetch(`${service.url}/trpc/${names}?batch=1&input=%7B%7D`);
    await response.arrayBuffer();
    await settledLogSize(service);
    const written = logLinesFrom(service, from);

    f.within("HTTP status", response.status, 400, 499);
    f.atMost("log lines written", written.length, 2);
    f.atMost("log lines with a stack", written.filter((line) => stack.test(line)).length, 0);
    f.info(
      "log bytes written",
      written.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0),
    );
    f.check();
  });
});
