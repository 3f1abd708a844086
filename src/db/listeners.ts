export type OnNotify = (payload: string) => void;

const channelPattern = /^[a-z_][a-z0-9_]*$/;

/** The in-process side of notify/listen: who listens to which channel. */
export class Listeners {
  private readonly byChannel = new Map<string, Set<OnNotify>>();

  /** Adds a listener; the returned function removes it. `onFirst`/`onLast` see a channel gain or lose its only listener. */
  add(channel: string, onNotify: OnNotify, hooks: { onFirst?: () => void; onLast?: () => void } = {}): () => void {
    // Channel names go into LISTEN statements on PostgreSQL: plain identifiers only.
    if (!channelPattern.test(channel)) throw new Error(`Not a channel name: ${channel}`);
    let set = this.byChannel.get(channel);
    if (!set) {
      set = new Set();
      this.byChannel.set(channel, set);
      hooks.onFirst?.();
    }
    // A wrapper per call, so the same function added twice is removed once per removal.
    const entry: OnNotify = (payload) => onNotify(payload);
    set.add(entry);
    return () => {
      if (!set.delete(entry) || set.size > 0) return;
      this.byChannel.delete(channel);
      hooks.onLast?.();
    };
  }

  emit(channel: string, payload: string): void {
    for (const onNotify of this.byChannel.get(channel) ?? []) {
      try {
        onNotify(payload);
      } catch (error) {
        // One listener's failure must not keep the others from waking.
        process.emitWarning(`A listener of channel ${channel} threw: ${String(error)}`);
      }
    }
  }

  /** Wakes every listener of every channel (payload ""): something may have changed, nobody knows what. */
  emitAll(): void {
    for (const channel of [...this.byChannel.keys()]) this.emit(channel, "");
  }

  channels(): string[] {
    return [...this.byChannel.keys()];
  }

  get empty(): boolean {
    return this.byChannel.size === 0;
  }
}
