// Concurrent writers for the kill -9 scenario: each worker creates agents
// and PATCHes the ones it created, recording every write the service
// acknowledged (2xx), until told to stop (the service has been killed by then).

import { keepAliveAgent, send } from "./http.js";
import { finish, input, next, send as tell } from "./ipc.js";

interface Input {
  url: string;
  workers: number;
  /** Tells this round's names apart from other rounds'. */
  prefix: string;
  /** Share of a worker's writes that PATCH one of its agents (once it has one). */
  patchShare: number;
  /** "started" is sent once this many of each kind of write were acknowledged. */
  startAfter: { creates: number; patches: number };
}

/** An agent as acknowledged: its id and the name its last acknowledged write gave it. */
export interface Acknowledged {
  id: string;
  name: string;
  /** How many PATCHes were acknowledged; the name ends in `#<patches>` once it is above 0. */
  patches: number;
}

const { url, workers, prefix, patchShare, startAfter } = await input<Input>();
const agent = keepAliveAgent(workers);
const acknowledged = new Map<string, Acknowledged>();
let stopping = false;
let attempts = 0;
let failures = 0;
// Requests the kill cut off: sent, and ended by a reset instead of a response.
let cutOff = 0;
let announced = false;
let patched = 0;

async function worker(index: number) {
  const mine: Acknowledged[] = [];
  let count = 0;
  while (!stopping) {
    attempts++;
    let acked = false;
    const target =
      mine.length > 0 && Math.random() < patchShare ? mine[Math.floor(Math.random() * mine.length)] : undefined;
    if (target) {
      // One worker owns each agent and PATCHes it one write at a time, so
      // acknowledgements arrive in the order the writes were made.
      const name = `${target.name.split("#")[0]}#${target.patches + 1}`;
      const outcome = await send(url, {
        method: "PATCH",
        path: `/agents/${target.id}`,
        body: JSON.stringify({ name }),
        agent,
        timeoutMs: 20_000,
      });
      if (outcome.status === 200) {
        acked = true;
        target.patches++;
        target.name = name;
        patched++;
      } else {
        failures++;
        if (outcome.error === "ECONNRESET" || outcome.error === "socket hang up") cutOff++;
      }
    } else {
      const name = `${prefix}-w${index}-${count++}`;
      const outcome = await send(url, {
        method: "POST",
        path: "/agents",
        body: JSON.stringify({ name, type: "worker" }),
        agent,
        timeoutMs: 20_000,
      });
      if (outcome.status === 201) {
        acked = true;
        const { id } = JSON.parse(outcome.body) as { id: string };
        const written = { id, name, patches: 0 };
        mine.push(written);
        acknowledged.set(id, written);
      } else {
        failures++;
        if (outcome.error === "ECONNRESET" || outcome.error === "socket hang up") cutOff++;
      }
    }
    // The test kills the service only once both kinds of write are under way.
    if (!announced && acknowledged.size >= startAfter.creates && patched >= startAfter.patches) {
      announced = true;
      tell({ type: "started" });
    }
    // Once the service is gone every attempt fails at once: do not spin.
    if (!acked && !stopping) await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const running = Array.from({ length: workers }, (_, i) => worker(i));
await next("stop");
stopping = true;
agent.destroy();
await Promise.all(running);
finish({ acknowledged: [...acknowledged.values()], attempts, failures, cutOff });
