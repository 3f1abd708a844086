import type { Server, ServerResponse } from "node:http";
import { Server as NetServer } from "node:net";
import { acceptQueueLength } from "./accept-queue.js";

/** After the last in-flight response, idle connections get this long before they are closed. */
const idleLingerMs = 250;
/** How long the listener stays open after the signal, taking the connections already queued. */
const listenerLingerMs = 1000;
/** How often, past that second, the kernel's accept queue is looked at until it is empty. */
const acceptQueueCheckMs = 20;

/**
 * Graceful shutdown of an HTTP server, installed when it is created so it
 * knows every response in flight. `drain()`:
 * - closes the listener a second later, once the kernel's accept queue is
 *   empty (Linux; elsewhere after that second): every connection a client
 *   opened before is taken, and a new one is then refused, never accepted
 *   and reset. A busy process takes one connection per turn of its loop, so
 *   hundreds opened in a burst can wait there past that second; the
 *   listener waits for them at most half of `graceMs`;
 * - lets every request already received finish, on every connection, and
 *   answers each with `Connection: close`, so its client does not send the
 *   next request on a connection about to close;
 * - closes idle keep-alive connections only once nothing is in flight (and a
 *   moment after), so a request a client sends on one while others drain is
 *   still read and answered instead of reset;
 * - after `graceMs`, closes whatever is left.
 * It resolves when the last connection is gone.
 */
export function gracefulShutdown(server: Server) {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  let onQuiet: (() => void) | undefined;

  server.prependListener("request", (_req, res: ServerResponse) => {
    if (draining) res.shouldKeepAlive = false;
    inFlight.add(res);
    res.once("close", () => {
      inFlight.delete(res);
      if (inFlight.size === 0) onQuiet?.();
    });
  });

  return {
    drain(graceMs: number, onForced: () => void): Promise<void> {
      draining = true;
      // Node writes `Connection: close` on a response that should not keep the connection alive.
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      return new Promise((resolve) => {
        let linger: NodeJS.Timeout | undefined;
        onQuiet = () => {
          clearTimeout(linger);
          linger = setTimeout(() => {
            if (inFlight.size === 0) server.closeIdleConnections();
          }, idleLingerMs);
        };
        const forced = setTimeout(() => {
          onForced();
          server.closeAllConnections();
        }, graceMs);
        forced.unref();
        // net.Server's close stops accepting and calls back once every connection is gone. http.Server's
        // own close() would also close idle keep-alive connections at once, racing requests sent on them.
        // Not at once: connections a client opened before the signal may still wait in the kernel's
        // accept queue (a busy process takes them when it gets to it), and closing the listener would
        // reset them along with the requests already sent on them. Meanwhile /readyz says 503, so a
        // load balancer stops sending new ones, and what still comes is answered with Connection: close.
        const closeListener = () =>
          NetServer.prototype.close.call(server, () => {
            clearTimeout(forced);
            clearTimeout(linger);
            resolve();
          });
        const earliest = Math.min(listenerLingerMs, graceMs);
        const latest = performance.now() + Math.max(earliest, graceMs / 2);
        const closeOnceTaken = () => {
          if ((acceptQueueLength(server) ?? 0) > 0 && performance.now() < latest) {
            setTimeout(closeOnceTaken, acceptQueueCheckMs);
          } else closeListener();
        };
        setTimeout(closeOnceTaken, earliest);
        if (inFlight.size === 0) onQuiet();
      });
    },
  };
}
