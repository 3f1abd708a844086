import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/**
 * The SSRF guard: a webhook URL is called only when every address its host resolves to is public
 * (unless private addresses are allowed), and the sender then connects to exactly those addresses.
 * The clouds' metadata and host-internal endpoints are refused whatever private addresses may do.
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses; the default is the system resolver (dns.lookup). */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));

export const MAX_URL_LENGTH = 2000;

// IANA's special-purpose IPv4 registry, and what clouds use for metadata: nothing a webhook
// receiver on the internet can live at. 240.0.0.0/4 includes the broadcast address.
const nonPublicIPv4: [string, number][] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // RFC 1918
  ["100.64.0.0", 10], // CGNAT (includes 100.100.100.200, a metadata address)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (includes 169.254.169.254, the metadata address)
  ["172.16.0.0", 12], // RFC 1918
  ["192.0.0.0", 24], // IETF protocol assignments (includes 192.0.0.192, a metadata address)
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // RFC 1918
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];

// IPv6 is judged by allow-list first (global unicast 2000::/3, and the two forms that embed an IPv4
// address), then by these carve-outs. Everything else (::, ::1, fc00::/7, fe80::/10, ff00::/8, …) is
// outside the allowed space.
const embeddingIPv4: [string, number][] = [
  ["::ffff:0.0.0.0", 96], // IPv4-mapped
  ["64:ff9b::", 96], // NAT64 well-known prefix
];
const nonPublicGlobalIPv6: [string, number][] = [
  ["2001::", 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: embeds an arbitrary IPv4 address
  ["3fff::", 20], // documentation
];

// Where the large clouds serve instance metadata, credentials and other host-internal services
// (docs/api/webhooks.md): never a webhook receiver, even where private addresses are allowed.
// Link-local space holds most of them: 169.254.169.254 (AWS, Azure, GCP, Oracle, DigitalOcean,
// OpenStack, IBM, Hetzner), 169.254.170.2 and 169.254.170.23 (AWS ECS task metadata, EKS Pod
// Identity), 169.254.169.253 and 169.254.169.123 (AWS DNS and time), 169.254.42.42 (Scaleway).
const cloudInternalIPv4: [string, number][] = [
  ["169.254.0.0", 16], // link-local
  ["168.63.129.16", 32], // Azure WireServer (host agent, DNS, health probes)
  ["100.100.100.200", 32], // Alibaba Cloud metadata
  ["192.0.0.192", 32], // Oracle Cloud Classic metadata
];
const cloudInternalIPv6: [string, number][] = [
  ["fe80::", 10], // link-local (OpenStack's metadata fe80::a9fe:a9fe among it)
  ["fd00:ec2::254", 128], // AWS instance metadata
  ["fd00:ec2::253", 128], // AWS DNS
  ["fd00:ec2::123", 128], // AWS time
  ["fd00:ec2::23", 128], // AWS EKS Pod Identity
  ["fd20:ce::254", 128], // GCP metadata
  ["fd00:c1::a9fe:a9fe", 128], // Oracle Cloud metadata
  ["fd00:42::42", 128], // Scaleway metadata
];
// Names the clouds' resolvers give their metadata servers, refused by name: they may resolve
// differently (or not at all) where the guard runs than where a request would go.
const cloudInternalNames = new Set([
  "metadata", // GCP
  "metadata.google.internal", // GCP
  "metadata.goog", // GCP
  "instance-data", // AWS
  "instance-data.ec2.internal", // AWS
]);

/**
 * A block list of IPv4 networks, also written as IPv6 (mapped and NAT64: BlockList matches mapped
 * forms against IPv4 rules by itself; stating them keeps that from being an unseen dependency),
 * and of IPv6 networks.
 */
function blockListOf(ipv4: [string, number][], ipv6: [string, number][]): BlockList {
  const list = new BlockList();
  for (const [network, bits] of ipv4) {
    list.addSubnet(network, bits, "ipv4");
    list.addSubnet(`::ffff:${network}`, 96 + bits, "ipv6");
    list.addSubnet(`64:ff9b::${network}`, 96 + bits, "ipv6");
  }
  for (const [network, bits] of ipv6) list.addSubnet(network, bits, "ipv6");
  return list;
}

const cloudInternal = blockListOf(cloudInternalIPv4, cloudInternalIPv6);
const nonPublic = blockListOf(nonPublicIPv4, nonPublicGlobalIPv6);

const publicIPv6Space = new BlockList();
publicIPv6Space.addSubnet("2000::", 3, "ipv6");
for (const [prefix, bits] of embeddingIPv4) publicIPv6Space.addSubnet(prefix, bits, "ipv6");

// The Fetch standard's "bad ports" (SMTP, IRC, …): fetch refuses them, so a webhook on one could
// never be delivered; refused up front with a clear reason. https://fetch.spec.whatwg.org/#port-blocking
const badPorts = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** True when the address is one of a cloud's metadata or host-internal endpoints (or link-local). */
function isCloudInternalAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && cloudInternal.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** True when a host name is one the clouds give their metadata servers (any case, with or without a final dot). */
function isCloudInternalName(hostname: string): boolean {
  return cloudInternalNames.has(hostname.toLowerCase().replace(/\.+$/, ""));
}

/** True when the address is public: not loopback, private, link-local, reserved, multicast, a cloud's own, … */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (isCloudInternalAddress(address)) return false;
  if (family === 4) return !nonPublic.check(address, "ipv4");
  if (family === 6) return publicIPv6Space.check(address, "ipv6") && !nonPublic.check(address, "ipv6");
  return false;
}

export type UnsafeUrlReason =
  | "invalid"
  | "too_long"
  | "scheme"
  | "credentials"
  | "port"
  | "unresolvable"
  | "cloud_internal"
  | "non_public";

const messages: Record<UnsafeUrlReason, string> = {
  invalid: "is not a valid URL",
  too_long: `is longer than ${MAX_URL_LENGTH} characters`,
  scheme: "must be an http or https URL",
  credentials: "must not contain a user name or password",
  port: "uses a port HTTP clients refuse (such as 25 or 6000)",
  unresolvable: "has a host that could not be resolved",
  cloud_internal: "is or resolves to a cloud metadata or host-internal address, which is never called",
  non_public: "resolves to a loopback, private or otherwise non-public address",
};

/** A URL the guard refuses; the message names no address (it would map internal DNS for a caller). */
export class UnsafeUrlError extends Error {
  constructor(
    readonly reason: UnsafeUrlReason,
    options?: ErrorOptions,
  ) {
    super(`url ${messages[reason]}`, options);
    this.name = "UnsafeUrlError";
  }
}

export interface CheckedUrl {
  url: URL;
  /** The URL's host without IPv6 brackets: what TLS verifies and what the addresses belong to. */
  hostname: string;
  /** Every address the host resolved to, all checked; connect to these and nothing else. */
  addresses: ResolvedAddress[];
}

export interface CheckOptions {
  allowPrivate: boolean;
  resolve?: Resolve;
  /** Gives up resolving when it aborts (the resolver itself cannot be cancelled). */
  signal?: AbortSignal;
}

/** Checks a webhook URL as docs/api/webhooks.md says; throws UnsafeUrlError. */
export async function checkUrl(raw: string, options: CheckOptions): Promise<CheckedUrl> {
  if (raw.length > MAX_URL_LENGTH) throw new UnsafeUrlError("too_long");
  const url = URL.parse(raw);
  if (!url) throw new UnsafeUrlError("invalid");
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UnsafeUrlError("scheme");
  if (url.username || url.password) throw new UnsafeUrlError("credentials");
  if (url.port && badPorts.has(Number(url.port))) throw new UnsafeUrlError("port");
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isCloudInternalName(hostname)) throw new UnsafeUrlError("cloud_internal");
  const literal = isIP(hostname);
  const addresses = literal
    ? [{ address: hostname, family: literal as 4 | 6 }]
    : await resolveWithin(hostname, options.resolve ?? systemResolve, options.signal);
  if (addresses.length === 0) throw new UnsafeUrlError("unresolvable");
  if (!options.allowPrivate && !addresses.every(({ address }) => isPublicAddress(address))) {
    throw new UnsafeUrlError("non_public");
  }
  // WEBHOOK_ALLOW_PRIVATE opens the private ranges, not these.
  if (addresses.some(({ address }) => isCloudInternalAddress(address))) throw new UnsafeUrlError("cloud_internal");
  return { url, hostname, addresses };
}

async function resolveWithin(hostname: string, resolve: Resolve, signal?: AbortSignal) {
  signal?.throwIfAborted();
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([resolve(hostname), aborted]);
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    // ENOTFOUND, EAI_AGAIN, a resolver that failed: the host has no address we could check.
    throw new UnsafeUrlError("unresolvable", { cause: error });
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}
