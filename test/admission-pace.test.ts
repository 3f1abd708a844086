import { Agent, createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { admission } from "../src/http/guards/admission.js";

// Under a crowd's sustained overload, a request whose place in line would
// take too long at the pace slots free is refused as it arrives, instead of
// after waiting MAX_QUEUE_MS. The admission runs in a real HTTP server whose
// requests each hold their slot 5 ms (a timer, so the pace depends little
// on this machine's speed): one slot serves about 200 a second.

const maxQueueMs = 1000;
const holdMs = 5;
const clients = 200;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** One request; its status, and how long the service took to answer it (ms), as the body says. */
function get(port: number, agent: Agent): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: Number(body) }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("admission under a crowd's sustained overload", () => {
  it("refuses at once a request whose place in line would take more than half of MAX_QUEUE_MS, and serves the rest of the line", async () => {
    // Event-loop lag is not a reason to refuse here, and 200 connections are too few to count as
    // a flood: a refusal is either the one on the expected wait or the wait running out.
    const door = admission(
      { maxInFlight: 1, maxQueued: 10_000, maxQueueMs, maxEventLoopDelayMs: 60_000, maxLongPolls: 1 },
      "sqlite",
    );
    const listening = createServer(async (_req, res) => {
      const arrived = performance.now();
      const refusal = await door.admit(res);
      const ms = String(performance.now() - arrived);
      if (refusal) res.writeHead(503).end(ms);
      else setTimeout(() => res.writeHead(200).end(ms), holdMs);
    });
    server = listening;
    await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
    const { port } = listening.address() as AddressInfo;

    // Each client sends its next request as soon as it is answered: the line holds up to 199,
    // about 1 s of work or more; half of MAX_QUEUE_MS is about 100 places, fewer when the
    // timers run late on a busy machine. The first 32 are never refused on the estimate; they
    // wait about 160 ms, well within MAX_QUEUE_MS even on a machine three times as busy.
    const agent = new Agent({ keepAlive: true, maxSockets: clients });
    const answers: { status: number; ms: number }[] = [];
    const until = performance.now() + 3000;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < until) answers.push(await get(port, agent));
      }),
    );
    agent.destroy();

    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 503);
    expect(served.length).toBeGreaterThan(100);
    expect(refused.length).toBeGreaterThan(100);
    // Refused as they arrived: without the estimate every refusal waits MAX_QUEUE_MS first.
    const atOnce = refused.filter((a) => a.ms < maxQueueMs / 4).length;
    // Most, not all: on a machine so busy that fewer than 10 slots free in 100 ms the pace is
    // unknown for a while, and the line waits as it did before (measured in CI: 77% at once).
    expect(atOnce).toBeGreaterThan(refused.length / 2);
    // And the line it keeps is served: the places it admits are worth their wait.
    const servedInTime = served.filter((a) => a.ms < maxQueueMs).length;
    expect(servedInTime).toBeGreaterThan(served.length * 0.9);
  });
});
