/**
 * Bounded concurrency for sends: at most `total` at once, and at most `perKey` for one key (an
 * endpoint), so a slow receiver holds its own few slots and the others keep going. Waiters start
 * in arrival order, skipping those whose endpoint is full.
 */
export interface Limiter {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Whether a task for this key would start now; lets a caller claim only work it can begin. */
  canStart(key: string): boolean;
  readonly running: number;
  readonly waiting: number;
}

export function createLimiter(limits: { total: number; perKey: number }): Limiter {
  let running = 0;
  const runningByKey = new Map<string, number>();
  const queue: { key: string; start: () => void }[] = [];

  const hasRoom = (key: string) => running < limits.total && (runningByKey.get(key) ?? 0) < limits.perKey;

  const startEligible = () => {
    for (let i = 0; i < queue.length && running < limits.total; ) {
      const waiter = queue[i] as (typeof queue)[number];
      if (!hasRoom(waiter.key)) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      running++;
      runningByKey.set(waiter.key, (runningByKey.get(waiter.key) ?? 0) + 1);
      waiter.start();
    }
  };

  const finish = (key: string) => {
    running--;
    const left = (runningByKey.get(key) ?? 1) - 1;
    if (left === 0) runningByKey.delete(key);
    else runningByKey.set(key, left);
    startEligible();
  };

  return {
    async run(key, task) {
      await new Promise<void>((start) => {
        queue.push({ key, start });
        startEligible();
      });
      try {
        return await task();
      } finally {
        finish(key);
      }
    },
    canStart: (key) => hasRoom(key) && !queue.some((waiter) => waiter.key === key),
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}
