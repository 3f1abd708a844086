import pg from "pg";
import type { Listeners } from "./listeners.js";

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;

/**
 * The one connection per process that LISTENs, outside the pool (a pooled
 * connection would be handed to other work). Connected when a channel first
 * gains a listener; reconnected with back-off when it drops. Whenever LISTEN
 * takes effect on a channel, its listeners are woken with payload "", since
 * anything may have changed while nobody was listening.
 */
export class PostgresListener {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private delay = FIRST_RETRY_MS;
  private closed = false;
  /** The last LISTEN or UNLISTEN sent; the next waits for it (see `send`). */
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly connectionString: string,
    private readonly listeners: Listeners,
  ) {}

  listen(channel: string): void {
    const client = this.client;
    if (!client) {
      this.connect();
      return;
    }
    this.send(client, `LISTEN "${channel}"`).then(
      () => this.listeners.emit(channel, ""),
      () => this.lost(client),
    );
  }

  unlisten(channel: string): void {
    const client = this.client;
    if (client) this.send(client, `UNLISTEN "${channel}"`).catch(() => this.lost(client));
  }

  /**
   * One command at a time on the client: several channels often gain listeners
   * in the same tick, and pg deprecates a query sent while another is running
   * on its client (pg 9 refuses it).
   */
  private send(client: pg.Client, sql: string): Promise<void> {
    const sent = this.sending.then(async () => {
      await client.query(sql);
    });
    this.sending = sent.catch(() => {});
    return sent;
  }

  private connect(): void {
    if (this.connecting || this.client || this.closed) return;
    this.connecting = this.open().finally(() => {
      this.connecting = undefined;
    });
  }

  private async open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on("notification", ({ channel, payload }) => this.listeners.emit(channel, payload ?? ""));
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      const channels = this.listeners.channels();
      for (const channel of channels) await client.query(`LISTEN "${channel}"`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      this.delay = FIRST_RETRY_MS;
      for (const channel of channels) this.listeners.emit(channel, "");
      // Channels that gained listeners while this connection was being made.
      for (const channel of this.listeners.channels()) if (!channels.includes(channel)) this.listen(channel);
    } catch {
      client.end().catch(() => {});
      this.scheduleReconnect();
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retry || this.listeners.empty) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect();
    }, this.delay);
    this.retry.unref();
    this.delay = Math.min(this.delay * 2, LAST_RETRY_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
