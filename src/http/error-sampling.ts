/**
 * Unexpected errors that repeat are sampled: a failing database makes every
 * request fail the same way, and a log line with a stack per request would
 * bury everything else (and fill the disk). Within each window, the first
 * `burst` errors of a kind (same type, message and throwing frame) are
 * logged in full; the rest are only counted, and the first one logged after
 * the window carries that count as `similar_suppressed`.
 */
const windowMs = 60_000;
const burst = 5;

interface Kind {
  windowStart: number;
  logged: number;
  suppressed: number;
}

const kinds = new Map<string, Kind>();
// A bound on the kinds remembered, so errors with ever-changing messages cannot grow the map without end.
const maxKinds = 1000;

const kindOf = (error: unknown) => {
  if (!(error instanceof Error)) return String(error).slice(0, 200);
  const frame = error.stack?.split("\n").find((line) => line.trimStart().startsWith("at ")) ?? "";
  return `${error.name}|${error.message.slice(0, 200)}|${frame.trim()}`;
};

/** Whether to log this error now, and how many like it went unlogged since the last one logged. */
export function sampleError(error: unknown, now = Date.now()): { log: boolean; suppressed: number } {
  const key = kindOf(error);
  let kind = kinds.get(key);
  if (!kind || now - kind.windowStart >= windowMs) {
    const suppressed = kind?.suppressed ?? 0;
    if (!kind && kinds.size >= maxKinds) kinds.clear();
    kind = { windowStart: now, logged: 1, suppressed: 0 };
    kinds.set(key, kind);
    return { log: true, suppressed };
  }
  if (kind.logged < burst) {
    kind.logged++;
    return { log: true, suppressed: 0 };
  }
  kind.suppressed++;
  return { log: false, suppressed: 0 };
}
