import { createServer, type RequestListener, type Server } from "node:http";
import type { Socket } from "node:net";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { answerClientErrors } from "./client-errors.js";

/**
 * The HTTP server with limits a slow or greedy client cannot get around:
 * - the request head must arrive within `headersTimeoutMs` and the whole
 *   request within `bodyTimeoutMs` more; past that the answer is 408 and
 *   the connection is closed (checked every second, not Node's default 30 s);
 * - an idle keep-alive connection is closed after `keepAliveTimeoutMs`,
 *   below the 60 s of a typical load balancer, so the balancer never sends
 *   a request on a connection the service is closing;
 * - one client address holds at most `maxConnectionsPerClient` connections;
 *   more are closed as they arrive;
 * - a request the parser refuses (a head over 16 KiB, bytes that are not
 *   HTTP, a timeout) is answered in the service's format (client-errors.ts).
 */
export function createHttpServer(app: RequestListener, limits: Config["server"], logger: Logger): Server {
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
  answerClientErrors(server, logger);
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
