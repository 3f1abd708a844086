import type { IncomingMessage } from "node:http";
import proxyaddr from "proxy-addr";
import type { TrustProxy } from "../trust-proxy.js";

// An IPv4 peer of a dual-stack socket reads ::ffff:1.2.3.4; it is the same client as 1.2.3.4.
const mappedIpv4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/**
 * The client's address: the socket's peer, or with TRUST_PROXY the nearest
 * X-Forwarded-For hop that is not a trusted proxy (walked from the socket
 * outwards, so a client cannot choose its address by sending the header
 * itself). What the rate limit and the login throttle count against.
 */
export function clientAddress(req: IncomingMessage, trust: TrustProxy | undefined): string {
  const address = (trust ? proxyaddr(req, trust) : req.socket.remoteAddress) ?? "unknown";
  return mappedIpv4.exec(address)?.[1] ?? address;
}
