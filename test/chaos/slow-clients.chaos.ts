// Scenario 4: ~1,000 slowloris sockets and ~1,000 slow uploads held open
// while a normal client keeps working; the normal client must not notice.
import { describe, it } from "vitest";
import { createAgents } from "./harness/agents.js";
import { providers } from "./harness/databases.js";
import { figures } from "./harness/figures.js";
import { scenarioResources } from "./harness/scenario.js";
import type { SteadyResult } from "./load/steady-client.js";

// The attack: 1,024 sockets sending a body byte every 2 s.
const slowloris = 1024;
const uploads = 1024;
const normalRunMs = 15_000;
// Our bounds for the normal client: what the admission target asks of admitted requests.
const minSuccess = 0.99;
const maxP99Ms = 500;

interface AttackResult {
  opened: number;
  closedByServer: number;
  refused: number;
  openAtStop: number;
}

describe.each(providers)("slow clients on %s", (provider) => {
  const resources = scenarioResources();

  it(`${slowloris} slowloris sockets and ${uploads} slow uploads do not starve a normal client`, async (context) => {
    const f = figures(context, "4 slow clients", provider);
    const database = await resources.database(provider, "slow");
    const service = await resources.service({ databaseUrl: database.url, label: `slow-${provider}` });
    const [id] = await createAgents(service.url, 1, "steady");

    const attack = resources.load("slow-clients", {
      host: "127.0.0.1",
      port: service.port,
      slowloris,
      uploads,
      clients: 32,
      headerByteMs: 1000,
      bodyByteMs: 2000,
    });
    const { open } = await attack.next<{ type: "holding"; open: number }>("holding", 60_000);
    const normal = resources.load("steady-client", {
      url: service.url,
      durationMs: normalRunMs,
      ratePerSecond: 50,
      timeoutMs: 10_000,
      calls: [
        { method: "GET", path: "/agents?limit=10" },
        { method: "GET", path: `/agents/${id}` },
        { method: "POST", path: "/agents", body: '{"name":"steady-{n}","type":"worker"}' },
      ],
    });
    const { result } = await normal.next<{ type: "result"; result: SteadyResult }>("result", normalRunMs + 60_000);
    attack.send({ type: "stop" });
    const attackResult = (await attack.next<{ type: "result"; result: AttackResult }>("result")).result;

    f.info("slow sockets open when the client started", open);
    f.info("slow sockets open at the end", attackResult.openAtStop);
    f.info("slow sockets closed by the service", attackResult.closedByServer);
    f.info("slow sockets refused", attackResult.refused);
    f.info("normal client requests (50/s)", result.requests);
    f.atLeast("normal client success %", (100 * result.succeeded) / Math.max(1, result.requests), minSuccess * 100);
    f.atMost("normal client p99 ms", result.p99, maxP99Ms);
    f.info("load generator lag p99 ms", result.lagP99);
    f.atMost("service exited during the attack", service.alive() ? 0 : 1, 0);
    if (result.succeeded < result.requests)
      context.annotate(`normal client statuses: ${JSON.stringify(result.statuses)}`);
    f.check();
  });
});
