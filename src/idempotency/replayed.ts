import type { IncomingMessage } from "node:http";

// The requests answered from a kept response: each transport adds
// `Idempotent-Replayed: true` to them. Keyed by the request, which both
// transports and every procedure's context share.
const replayed = new WeakSet<IncomingMessage>();

export const markReplayed = (req: IncomingMessage | undefined) => req && replayed.add(req);

/** The header a replayed request's response carries, or undefined. */
export const replayedHeader = (req: IncomingMessage | undefined): Record<string, string> | undefined =>
  req && replayed.has(req) ? { "Idempotent-Replayed": "true" } : undefined;
