import type { EventRecord, EventType } from "./types.js";

// A subscriber this far behind stops being fed and reads the table itself.
const MAX_BUFFERED = 5000;

/** Which events a subscriber wants. */
export interface EventMatch {
  /** The project whose events it reads: never another's. */
  projectId: string;
  agentId?: string;
  /** Exact types; undefined for all. */
  types?: readonly EventType[];
}

/** One reader fed by the hub: events it matches, in id order, until it leaves. */
export class HubSubscriber {
  /** Never changed in place: it may be the very array other subscribers were handed. */
  private buffer: readonly EventRecord[] = [];
  private waiting: ((woken: boolean) => void) | undefined;
  private signal: AbortSignal | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerMs = 0;
  private readonly types: ReadonlySet<string> | undefined;
  /** The same for subscribers that want the same events. */
  readonly filterKey: string;
  /** Set when the subscriber fell too far behind and was dropped events: it must read the table again. */
  overflowed = false;

  constructor(
    readonly match: EventMatch,
    private readonly leave: (subscription: HubSubscriber) => void,
  ) {
    this.types = match.types && new Set(match.types);
    this.filterKey = JSON.stringify([
      match.projectId,
      match.agentId ?? null,
      match.types ? [...match.types].sort() : null,
    ]);
  }

  /** The events of `events` this subscriber wants: its project's, of its agent and types. */
  select(events: readonly EventRecord[]): readonly EventRecord[] {
    const { projectId, agentId } = this.match;
    const { types } = this;
    return events.filter(
      (event) =>
        event.project_id === projectId &&
        (agentId === undefined || event.agent_id === agentId) &&
        (types === undefined || types.has(event.type)),
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
    // One timer and one abort listener while the subscription lasts, not one of each per wait:
    // a stream waits again after every batch it writes.
    if (this.signal !== signal) {
      this.signal?.removeEventListener("abort", this.aborted);
      signal.addEventListener("abort", this.aborted, { once: true });
      this.signal = signal;
    }
    if (this.timer && this.timerMs === ms) this.timer.refresh();
    else {
      clearTimeout(this.timer);
      this.timer = setTimeout(this.timedOut, ms);
      this.timerMs = ms;
    }
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  private settle(woken: boolean): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(woken);
  }

  private readonly aborted = () => this.settle(false);
  // A timer left running by an earlier wait fires when no one waits: nothing to settle then.
  private readonly timedOut = () => this.settle(false);

  private notify(): void {
    this.settle(true);
  }

  close(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this.aborted);
    this.settle(false);
    this.leave(this);
  }
}
