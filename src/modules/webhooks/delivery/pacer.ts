export interface Pacer {
  /** Runs the work now, or once more as soon as the run under way has ended and the interval has passed. */
  request(): void;
  /** Runs nothing more; resolves once the run under way, if any, has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `work` on request, one run at a time, each starting at least
 * `intervalMs` after the one before: while requests keep coming, one run takes
 * everything they asked for since the last, instead of one run per request.
 * A request after a quiet spell runs at once.
 */
export function createPacer(work: () => Promise<void>, intervalMs: number): Pacer {
  let running: Promise<void> | undefined;
  let again = false;
  let lastStart = Number.NEGATIVE_INFINITY;
  let paced: NodeJS.Timeout | undefined;
  let stopped = false;

  function request(): void {
    if (stopped || paced) return;
    if (running) {
      again = true;
      return;
    }
    const wait = lastStart + intervalMs - performance.now();
    if (wait > 0) {
      paced = setTimeout(() => {
        paced = undefined;
        request();
      }, wait);
      paced.unref();
      return;
    }
    again = false;
    lastStart = performance.now();
    running = work().finally(() => {
      running = undefined;
      if (again) request();
    });
  }

  return {
    request,
    async stop() {
      stopped = true;
      clearTimeout(paced);
      await running;
    },
  };
}
