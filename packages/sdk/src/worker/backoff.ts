// Waiting between attempts: what the service says (Retry-After), else
// exponential backoff with jitter.

/** A Retry-After header (seconds, or an HTTP date) in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  const text = header?.trim() ?? "";
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Delays that double from `baseMs` up to `maxMs`, each drawn between half and
 * all of its ceiling, so that workers that failed together retry apart.
 */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly baseMs = 250,
    private readonly maxMs = 30_000,
  ) {}

  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** this.failures);
    this.failures = Math.min(this.failures + 1, 30);
    return ceiling / 2 + (Math.random() * ceiling) / 2;
  }

  reset(): void {
    this.failures = 0;
  }
}

/** Waits `ms`; true when it did, false as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (slept: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", aborted);
      resolve(slept);
    };
    const aborted = () => done(false);
    const timer = setTimeout(() => done(true), Math.max(0, ms));
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/**
 * A signal that aborts when any of `parents` does or after `timeoutMs`;
 * `dispose()` detaches it from its parents and clears its timer, so the
 * worker's long-lived signals hold nothing of a request that has ended.
 */
export function linkedSignal(parents: readonly AbortSignal[], timeoutMs: number) {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const timer = setTimeout(abort, Math.max(0, timeoutMs));
  for (const parent of parents) {
    if (parent.aborted) abort();
    else parent.addEventListener("abort", abort, { once: true });
  }
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      for (const parent of parents) parent.removeEventListener("abort", abort);
    },
  };
}
