import { describe, expect, it } from "vitest";
import { createLimiter } from "../src/modules/webhooks/delivery/limiter.js";

/** A promise the test settles when it chooses: a task that runs until then. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open: () => open() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("the send limiter", () => {
  it("keeps a slow endpoint to its own slots while other endpoints go on", async () => {
    const limiter = createLimiter({ total: 4, perKey: 2 });
    const started: string[] = [];
    const slow = gate();
    const slowRuns = Array.from({ length: 5 }, (_, i) =>
      limiter.run("slow", async () => {
        started.push(`slow${i}`);
        await slow.opened;
      }),
    );
    await tick();
    expect(started).toEqual(["slow0", "slow1"]);
    expect(limiter.canStart("slow")).toBe(false);
    expect(limiter.canStart("fast")).toBe(true);

    for (let i = 0; i < 6; i++) {
      await limiter.run("fast", async () => {
        started.push(`fast${i}`);
      });
    }
    expect(started).toEqual(["slow0", "slow1", "fast0", "fast1", "fast2", "fast3", "fast4", "fast5"]);
    expect(limiter.running).toBe(2);
    expect(limiter.waiting).toBe(3);

    slow.open();
    await Promise.all(slowRuns);
    expect(started.filter((name) => name.startsWith("slow"))).toEqual(["slow0", "slow1", "slow2", "slow3", "slow4"]);
    expect(limiter.running).toBe(0);
    expect(limiter.waiting).toBe(0);
  });

  it("never runs more than the total, and starts waiters in arrival order as slots free", async () => {
    const limiter = createLimiter({ total: 3, perKey: 3 });
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const gates = Array.from({ length: 9 }, gate);
    const runs = gates.map((g, i) =>
      limiter.run(`endpoint${i % 5}`, async () => {
        order.push(i);
        running++;
        most = Math.max(most, running);
        await g.opened;
        running--;
      }),
    );
    await tick();
    expect(order).toEqual([0, 1, 2]);
    for (const g of gates) {
      g.open();
      await tick();
    }
    await Promise.all(runs);
    expect(most).toBe(3);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("frees the slot of a task that fails, and passes its error on", async () => {
    const limiter = createLimiter({ total: 1, perKey: 1 });
    await expect(
      limiter.run("a", async () => {
        throw new Error("receiver exploded");
      }),
    ).rejects.toThrow("receiver exploded");
    expect(await limiter.run("a", async () => "next")).toBe("next");
    expect(limiter.running).toBe(0);
  });

  it("does not let a newcomer jump the queue of its own endpoint", async () => {
    const limiter = createLimiter({ total: 2, perKey: 1 });
    const first = gate();
    const running = limiter.run("a", () => first.opened);
    const queued = limiter.run("a", async () => {});
    await tick();
    expect(limiter.waiting).toBe(1);
    expect(limiter.canStart("a")).toBe(false);
    first.open();
    await Promise.all([running, queued]);
    expect(limiter.canStart("a")).toBe(true);
  });
});
