// Scenario 9: ordinary load is served, with every overload setting at its
// production default, shedding on event-loop lag included (the suite's
// tests turn that one off: on a machine shared with other tests it refuses
// whenever the machine is slow, not the service). Two loads a few clients
// make, neither of them overload:
// - two processes (WEB_CONCURRENCY=2) under 32 keep-alive connections, each
//   sending its next POST /agents once answered, for 4 s;
// - one client sending 5,000 GET /agents?limit=1 one after another, each on
//   a new connection.
// Every request must be answered 2xx.
import { Agent, request } from "node:http";
import { describe, it } from "vitest";
import { providers } from "./harness/databases.js";
import { figures } from "./harness/figures.js";
import { scenarioResources } from "./harness/scenario.js";

const connections = 32;
const runMs = 4000;
const sequentialRequests = 5000;

/** One request; its status, or the error's code when it got no answer. */
function send(url: string, options: { method: string; agent: Agent | false; body?: string }): Promise<number | string> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = options.body ? { "content-type": "application/json" } : {};
    if (options.agent === false) headers.connection = "close";
    const req = request(url, { method: options.method, agent: options.agent, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end(options.body);
  });
}

/** Statuses counted as "2xx", "503", other statuses, or error codes. */
function tally(statuses: Record<string, number>, status: number | string) {
  const key = typeof status === "number" && status >= 200 && status < 300 ? "2xx" : String(status);
  statuses[key] = (statuses[key] ?? 0) + 1;
}

describe.each(providers)("ordinary load on %s", (provider) => {
  const resources = scenarioResources();

  it(`${connections} connections of creates on WEB_CONCURRENCY=2, then ${sequentialRequests.toLocaleString("en-US")} requests on new connections: all 2xx`, async (context) => {
    const f = figures(context, "9 ordinary load", provider);
    const database = await resources.database(provider, "ordinary");
    const service = await resources.service({
      databaseUrl: database.url,
      label: `ordinary-${provider}`,
      env: { WEB_CONCURRENCY: "2" },
    });

    const creates: Record<string, number> = {};
    const agent = new Agent({ keepAlive: true, maxSockets: connections });
    let n = 0;
    const until = Date.now() + runMs;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (Date.now() < until) {
          const body = JSON.stringify({ name: `ordinary-${n++}`, type: "worker" });
          tally(creates, await send(`${service.url}/agents`, { method: "POST", agent, body }));
        }
      }),
    );
    agent.destroy();

    const reads: Record<string, number> = {};
    for (let i = 0; i < sequentialRequests; i++) {
      tally(reads, await send(`${service.url}/agents?limit=1`, { method: "GET", agent: false }));
    }

    for (const [label, statuses] of [
      [`${connections} connections of creates`, creates],
      ["sequential requests on new connections", reads],
    ] as const) {
      const total = Object.values(statuses).reduce((sum, count) => sum + count, 0);
      f.info(`${label}: requests`, total);
      f.atMost(`${label}: answered 503`, statuses["503"] ?? 0, 0);
      f.atMost(
        `${label}: answered otherwise or not at all`,
        total - (statuses["2xx"] ?? 0) - (statuses["503"] ?? 0),
        0,
      );
    }
    f.atLeast("sequential requests on new connections: answered 2xx", reads["2xx"] ?? 0, sequentialRequests);
    f.check();
  });
});
