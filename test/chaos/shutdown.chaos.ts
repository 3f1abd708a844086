// Scenario 7: SIGTERM with 500 requests in flight (100 of them still
// uploading their body) and 100 keep-alive clients about to send their next
// request. Across the runs: no request lost (every one gets a complete
// response, or a refused connection once the listener is closed), responses
// while draining carry `Connection: close`, and the process exits 0.
import { describe, it } from "vitest";
import { createAgents } from "./harness/agents.js";
import { providers } from "./harness/databases.js";
import { figures } from "./harness/figures.js";
import { scenarioResources } from "./harness/scenario.js";
import type { Exit, Service } from "./harness/service.js";
import type { ShutdownResult } from "./load/shutdown.js";

/** Runs per database (the measure: 10 runs, here split over the databases by default). */
const runs = Number(process.env.CHAOS_SHUTDOWN_RUNS ?? Math.ceil(10 / providers.length));
const exitWithinMs = 30_000;
/** A response the service wrote just before it handled the signal may reach the client this much later. */
const drainingMarginMs = 100;

async function exitOf(service: Service): Promise<Exit | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), exitWithinMs);
  });
  const exit = await Promise.race([service.exited, late]);
  clearTimeout(timer);
  return exit;
}

describe.each(providers)("shutdown on %s", (provider) => {
  const resources = scenarioResources();

  it(`${runs} runs of SIGTERM with 500 requests in flight and 100 keep-alive clients`, async (context) => {
    const f = figures(context, "7 shutdown", provider);
    const database = await resources.database(provider, "shutdown");
    const totals = {
      requests: 0,
      lost: 0,
      refused: 0,
      drainingWithoutClose: 0,
      draining: 0,
      badExits: 0,
      serverErrors: 0,
    };
    let fewestInFlight = Number.POSITIVE_INFINITY;
    const lostReasons: Record<string, number> = {};

    for (let run = 0; run < runs; run++) {
      const service = await resources.service({
        databaseUrl: database.url,
        label: `shutdown-${provider}-${run}`,
        // The 600 connections come from one loopback address, as from a proxy in front.
        env: { MAX_CONNECTIONS_PER_CLIENT: "1000" },
      });
      if (run === 0) await createAgents(service.url, 500, "listed");
      const load = resources.load("shutdown", {
        url: service.url,
        keepAliveClients: 100,
        inFlight: 500,
        slowBodies: 100,
        pageSize: 500,
      });
      await load.next("ready");
      load.send({ type: "fire" });
      await load.next("fired");
      service.signal("SIGTERM");
      load.send({ type: "signalled" });
      const { result } = await load.next<{ type: "result"; result: ShutdownResult }>("result");
      const exit = await exitOf(service);
      if (exit?.code !== 0) totals.badExits++;

      totals.requests += result.requests;
      totals.lost += result.lost;
      totals.refused += result.refused;
      // Draining began when the service handled the signal, which it logs: a busy event loop (a
      // burst of synchronous SQLite reads) may get to it well after the signal was sent. An answer
      // whose head arrived a moment after that was made while draining.
      const handled = /"time":"([^"]+)","signal":"SIGTERM","msg":"shutting down"/.exec(service.log())?.[1];
      const drainingSince = handled ? Date.parse(handled) + drainingMarginMs : Number.NEGATIVE_INFINITY;
      const draining = result.heads.filter((head) => head.at >= drainingSince);
      totals.draining += draining.length;
      totals.drainingWithoutClose += draining.filter((head) => !head.close).length;
      totals.serverErrors += Object.entries(result.statuses)
        .filter(([status]) => Number(status) >= 500 && status !== "503")
        .reduce((sum, [, count]) => sum + count, 0);
      fewestInFlight = Math.min(fewestInFlight, result.inFlightAtSignal);
      for (const [reason, count] of Object.entries(result.lostReasons))
        lostReasons[reason] = (lostReasons[reason] ?? 0) + count;
    }

    f.info("runs", runs);
    f.info("requests in all", totals.requests);
    f.atLeast("requests in flight at SIGTERM (fewest of the runs)", fewestInFlight, 250);
    f.atMost("requests lost (reset, hung up, cut off)", totals.lost, 0);
    f.info("connections refused after the listener closed", totals.refused);
    f.atMost("5xx other than 503", totals.serverErrors, 0);
    f.info("responses while draining", totals.draining);
    f.atMost("responses while draining without Connection: close", totals.drainingWithoutClose, 0);
    f.atMost(`runs not exiting 0 within ${exitWithinMs / 1000} s`, totals.badExits, 0);
    for (const [reason, count] of Object.entries(lostReasons)) f.info(`lost, ${reason}`, count);
    f.check();
  });
});
