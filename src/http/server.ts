import { createServer, type RequestListener, type Server } from "node:http";
import type { Socket } from "node:net";
import type { Config } from "../config.js";

/**
 * The HTTP server with limits a slow or greedy client cannot get around:
 * - the request head must arrive within `headersTimeoutMs` and the whole
 *   request within `bodyTimeoutMs` more; past that Node answers 408 and
 *   closes the connection (checked every second, not Node's default 30 s);
 * - an idle keep-alive connection is closed after `keepAliveTimeoutMs`,
 *   below the 60 s of a typical load balancer, so the balancer never sends
 *   a request on a connection the service is closing;
 * - one client address holds at most `maxConnectionsPerClient` connections;
 *   more are closed as they arrive.
 */
export function createHttpServer(app: RequestListener, limits: Config["server"]): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.headersTimeoutMs + limits.bodyTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: 1000,
    },
    app,
  );
  if (limits.maxConnectionsPerClient > 0) capConnectionsPerClient(server, limits.maxConnectionsPerClient);
  return server;
}

function capConnectionsPerClient(server: Server, max: number) {
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
