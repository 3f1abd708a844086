import { readFileSync, readlinkSync } from "node:fs";
import type { Server } from "node:net";

/** `/proc/net/tcp*`'s state of a listening socket. */
const listening = "0A";

/**
 * How many connections wait in the kernel's accept queue of `server`'s
 * listening socket: established, their requests possibly sent, not yet
 * taken by the process. Closing the listener resets every one of them.
 * Node takes one connection per turn of its event loop, so a busy process
 * can leave hundreds there for seconds.
 *
 * Linux only: the queue's length is the `rx_queue` of the socket's line in
 * `/proc/net/tcp` or `tcp6`, found by the inode behind the listener's file
 * descriptor. Elsewhere, or for a listener without a descriptor of its own
 * (a cluster worker's), it is unknown: undefined.
 */
export function acceptQueueLength(server: Server): number | undefined {
  const fd = (server as Server & { _handle?: { fd?: number } | null })._handle?.fd;
  if (process.platform !== "linux" || fd === undefined || fd < 0) return undefined;
  try {
    const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
    if (inode === undefined) return undefined;
    for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      for (const line of readFileSync(table, "latin1").split("\n")) {
        // sl local rem st tx_queue:rx_queue tr:when retrnsmt uid timeout inode …
        const [, , , state, queues, , , , , owner] = line.trim().split(/\s+/);
        if (owner === inode && state === listening) return Number.parseInt(queues?.split(":")[1] ?? "0", 16);
      }
    }
  } catch {
    // No /proc mounted, or a table that cannot be read: unknown, as on another system.
  }
  return undefined;
}
