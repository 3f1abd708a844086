import { expect } from "vitest";

/** A lifecycle table as the docs write it: each state and the states allowed next. */
export type Table = Record<string, readonly string[]>;

/** Every (from, to) pair of the table's states, with what the docs say should happen. */
export function transitionCases(table: Table) {
  const states = Object.keys(table);
  return states.flatMap((from) =>
    states.map((to) => ({
      from,
      to,
      outcome: from === to ? "no-op" : table[from]?.includes(to) ? "allowed" : "forbidden",
    })),
  );
}

/** The shortest sequence of allowed steps from `start` to `target` (breadth-first). */
export function pathTo(table: Table, start: string, target: string): string[] {
  const previous = new Map<string, string>([[start, start]]);
  const queue = [start];
  while (queue.length > 0) {
    const state = queue.shift() as string;
    if (state === target) break;
    for (const next of table[state] ?? []) {
      if (previous.has(next)) continue;
      previous.set(next, state);
      queue.push(next);
    }
  }
  if (!previous.has(target)) throw new Error(`${target} is unreachable from ${start}`);
  const path: string[] = [];
  for (let state = target; state !== start; state = previous.get(state) as string) path.unshift(state);
  return path;
}

export interface Outcome {
  target: string;
  status: number;
  body: { status?: string; updated_at?: string; details?: { from: string; to: string; allowed: string[] } };
}

/**
 * Checks the answers to concurrent status changes against the table and
 * returns the history they imply. Every write has its own updated_at, so the
 * 200 answers ordered by updated_at are the sequence of stored states; each
 * step of that sequence must be allowed, and each 409 must be a forbidden
 * change from a state of that sequence.
 */
export function historyOf(table: Table, initial: { status: string; updated_at: string }, outcomes: Outcome[]) {
  for (const outcome of outcomes) expect([200, 409]).toContain(outcome.status);

  const statesByTime = new Map<string, string>([[initial.updated_at, initial.status]]);
  for (const { target, body } of outcomes.filter((o) => o.status === 200)) {
    expect(body.status).toBe(target);
    const seen = statesByTime.get(body.updated_at as string);
    if (seen !== undefined) expect(seen, `two states stored at ${body.updated_at}`).toBe(target);
    statesByTime.set(body.updated_at as string, target);
  }
  const history = [...statesByTime]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([updated_at, status]) => ({ status, updated_at }));
  expect(history[0]).toEqual(initial);
  for (let i = 1; i < history.length; i++) {
    const [before, after] = [history[i - 1]?.status as string, history[i]?.status as string];
    expect(table[before], `${before} → ${after}`).toContain(after);
  }

  const visited = new Set(history.map((h) => h.status));
  for (const { target, body } of outcomes.filter((o) => o.status === 409)) {
    const { from, to, allowed } = body.details as { from: string; to: string; allowed: string[] };
    expect(to).toBe(target);
    expect(visited).toContain(from);
    expect(allowed).toEqual(table[from]);
    expect(allowed).not.toContain(to);
    expect(from).not.toBe(to);
  }
  return history;
}
