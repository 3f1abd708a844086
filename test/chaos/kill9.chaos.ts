// Scenario 2: SIGKILL the service in the middle of many concurrent creates
// and PATCHes, several times, restarting it on the same database each time.
// Every write it acknowledged with a 2xx before a kill must be there after.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, it } from "vitest";
import { listAgents } from "./harness/agents.js";
import { providers } from "./harness/databases.js";
import { figures } from "./harness/figures.js";
import { seededRandom } from "./harness/random.js";
import { scenarioResources } from "./harness/scenario.js";
import type { Acknowledged } from "./load/writers.js";

const kills = Number(process.env.CHAOS_KILLS ?? 3);
const writers = 200;

interface WritersResult {
  acknowledged: Acknowledged[];
  attempts: number;
  failures: number;
  cutOff: number;
}

describe.each(providers)("kill -9 under concurrent writes on %s", (provider) => {
  const resources = scenarioResources();

  it(`loses no acknowledged write across ${kills} kills`, async (context) => {
    const f = figures(context, "2 kill -9", provider);
    const random = seededRandom(provider === "sqlite" ? 2 : 3);
    const database = await resources.database(provider, "kill9");
    const acknowledged = new Map<string, Acknowledged>();
    let attempts = 0;
    let cutOff = 0;

    for (let round = 0; round < kills; round++) {
      const service = await resources.service({ databaseUrl: database.url, label: `kill9-${provider}-${round}` });
      const load = resources.load("writers", {
        url: service.url,
        workers: writers,
        prefix: `r${round}`,
        patchShare: 0.5,
        startAfter: { creates: 100, patches: 25 },
      });
      // Killed only with both kinds of write under way; a service that cannot get there in a minute fails.
      await load.next("started", 60_000);
      await sleep(300 + random() * 1200); // somewhere in the middle of the load
      await service.kill();
      load.send({ type: "stop" });
      const { result } = await load.next<{ type: "result"; result: WritersResult }>("result");
      for (const written of result.acknowledged) acknowledged.set(written.id, written);
      attempts += result.attempts;
      cutOff += result.cutOff;
    }

    const restarted = await resources.service({ databaseUrl: database.url, label: `kill9-${provider}-after` });
    const stored = await listAgents(restarted.url);
    let lostCreates = 0;
    let lostPatches = 0;
    let patches = 0;
    for (const written of acknowledged.values()) {
      patches += written.patches;
      const name = stored.get(written.id);
      if (name === undefined) {
        lostCreates++;
        continue;
      }
      // A later PATCH may have committed without its answer arriving; an earlier state may not survive.
      const [base, count] = name.split("#");
      if (base !== written.name.split("#")[0] || Number(count ?? 0) < written.patches) lostPatches++;
    }

    f.info("kills during the load", kills);
    f.info("writes attempted", attempts);
    f.info("writes cut off by the kills", cutOff);
    f.info("creates acknowledged", acknowledged.size);
    f.info("PATCHes acknowledged", patches);
    f.atMost("acknowledged creates lost", lostCreates, 0);
    f.atMost("acknowledged PATCHes lost", lostPatches, 0);
    f.check();
  });
});
