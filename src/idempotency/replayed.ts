/**
 * A result answered from a kept response, not run again: REST and tRPC both
 * add `Idempotent-Replayed: true` when a procedure's result is one. It
 * serialises as the result itself, so a transport that does not look sends
 * the same body.
 */
export class Replayed {
  constructor(readonly data: unknown) {}

  toJSON(): unknown {
    return this.data;
  }
}

export const replayedHeader = { "Idempotent-Replayed": "true" } as const;

/** The result without its replay mark, and whether it had one. */
export const unwrapReplayed = (result: unknown): { data: unknown; replayed: boolean } =>
  result instanceof Replayed ? { data: result.data, replayed: true } : { data: result, replayed: false };
