import type { EventRecord, EventType } from "./types.js";

// A subscriber this far behind stops being fed and reads the table itself.
const MAX_BUFFERED = 5000;

/** Which events a subscriber wants. */
export interface EventMatch {
  agentId?: string;
  /** Exact types; undefined for all. */
  types?: readonly EventType[];
}

/** One reader fed by the hub: events it matches, in id order, until it leaves. */
export class Subscription {
  /** Never changed in place: it may be the very array other subscribers were handed. */
  private buffer: readonly EventRecord[] = [];
  private wake: (() => void) | undefined;
  private readonly types: ReadonlySet<string> | undefined;
  /** The same for subscribers that want the same events. */
  readonly filterKey: string;
  /** Set when the subscriber fell too far behind and was dropped events: it must read the table again. */
  overflowed = false;

  constructor(
    readonly match: EventMatch,
    private readonly leave: (subscription: Subscription) => void,
  ) {
    this.types = match.types && new Set(match.types);
    this.filterKey = JSON.stringify([match.agentId ?? null, match.types ? [...match.types].sort() : null]);
  }

  /** The events of `events` this subscriber wants: `events` itself when it wants them all. */
  select(events: readonly EventRecord[]): readonly EventRecord[] {
    const { agentId } = this.match;
    const { types } = this;
    if (agentId === undefined && types === undefined) return events;
    return events.filter(
      (event) =>
        (agentId === undefined || event.agent_id === agentId) && (types === undefined || types.has(event.type)),
    );
  }

  /** Called by the hub with the new events this subscriber wants (`select`), in id order. */
  offer(events: readonly EventRecord[]): void {
    if (events.length > 0) this.buffer = this.buffer.length === 0 ? events : this.buffer.concat(events);
    if (this.buffer.length > MAX_BUFFERED) {
      this.buffer = [];
      this.overflowed = true;
    }
    if (events.length > 0 || this.overflowed) this.notify();
  }

  /** Every event offered since the last call. */
  take(): readonly EventRecord[] {
    const taken = this.buffer;
    this.buffer = [];
    return taken;
  }

  /** Resolves true when events arrive, false after `ms` without any or when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.buffer.length > 0 || this.overflowed) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.wake = undefined;
        resolve(woken);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      signal.addEventListener("abort", onAbort, { once: true });
      this.wake = () => done(true);
    });
  }

  private notify(): void {
    this.wake?.();
  }

  close(): void {
    this.leave(this);
  }
}
