import type { LookupAddress, LookupOptions } from "node:dns";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { Agent, type Dispatcher, request } from "undici";
import { type CheckedUrl, checkUrl, type Resolve, type ResolvedAddress, UnsafeUrlError } from "../ssrf.js";

export interface WebhookMessage {
  body: string;
  headers: Readonly<Record<string, string>>;
}

/** One attempt's outcome, as the delivery log records it. `error` is plain text, never a secret. */
export interface SendOutcome {
  ok: boolean;
  statusCode?: number;
  error?: string;
  durationMs: number;
}

export interface SenderOptions {
  allowPrivate: boolean;
  /** The whole attempt: resolution, connection, and the answer's status line (WEBHOOK_TIMEOUT_SECONDS, 10 s by default). */
  timeoutMs?: number;
  resolve?: Resolve;
  /** Extra trusted certificates (PEM), for receivers with a private CA. */
  ca?: string | Buffer;
}

export interface Sender {
  send(url: string, message: WebhookMessage): Promise<SendOutcome>;
  /** Closes pooled connections; in-flight sends finish first. */
  close(): Promise<void>;
}

const RESPONSE_BYTES_READ = 4096;
const POOLED_AGENTS = 64;
const USER_AGENT = "agent-management-api-webhooks";

/**
 * Sends Standard Webhooks messages. Every attempt checks the URL again (SSRF guard) and connects
 * only to the addresses that check returned: the dispatcher's lookup answers with them instead of
 * asking DNS again, so a name that changes its answer between check and connect gains nothing.
 * TLS still verifies the certificate against the URL's host name.
 */
export function createSender(options: SenderOptions): Sender {
  const timeoutMs = options.timeoutMs ?? 10_000;
  // One undici Agent per origin and set of checked addresses, so keep-alive connections are reused
  // while DNS gives the same answer, and a different answer never reuses another's connections.
  const agents = new Map<string, Agent>();

  const agentFor = (checked: CheckedUrl) => {
    const key = `${checked.url.origin} ${checked.addresses.map(({ address }) => address).join(" ")}`;
    let agent = agents.get(key);
    if (agent) {
      agents.delete(key);
    } else {
      agent = new Agent({
        connect: { lookup: pinnedLookup(checked.addresses), ...(options.ca && { ca: options.ca }) },
      });
    }
    agents.set(key, agent); // most recently used last
    for (const [oldKey, oldAgent] of agents) {
      if (agents.size <= POOLED_AGENTS) break;
      agents.delete(oldKey);
      // Waits for its in-flight sends; a failure to close an idle pool is nobody's concern.
      oldAgent.close().catch(() => {});
    }
    return agent;
  };

  return {
    async send(url, message) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const checked = await checkUrl(url, { allowPrivate: options.allowPrivate, resolve: options.resolve, signal });
        // undici's request(), not fetch(): the same pooled connections without the WHATWG stream layers.
        const response = await request(checked.url, {
          method: "POST",
          headers: { "content-type": "application/json", "user-agent": USER_AGENT, ...message.headers },
          body: message.body,
          dispatcher: agentFor(checked),
          signal,
        });
        const durationMs = elapsed();
        await discardBody(response.body);
        const { statusCode } = response;
        if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode, durationMs };
        if (statusCode >= 300 && statusCode < 400) {
          return { ok: false, statusCode, error: "redirects are not followed", durationMs };
        }
        return { ok: false, statusCode, durationMs };
      } catch (error) {
        const durationMs = elapsed();
        if (signal.aborted) return { ok: false, error: `no answer within ${timeoutMs} ms`, durationMs };
        if (error instanceof UnsafeUrlError) return { ok: false, error: error.message, durationMs };
        return { ok: false, error: describeFailure(error), durationMs };
      }
    },
    async close() {
      const closing = [...agents.values()].map((agent) => agent.close());
      agents.clear();
      await Promise.all(closing);
    },
  };
}

/** A lookup for net/tls.connect that answers with the checked addresses and never asks DNS. */
function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname: string, options: LookupOptions, callback) => {
    const family = options.family === 4 || options.family === "IPv4" ? 4 : options.family === 6 ? 6 : 0;
    const usable: LookupAddress[] = addresses.filter((address) => family === 0 || address.family === family);
    const [first] = usable;
    if (!first) {
      callback(Object.assign(new Error("No checked address of that family"), { code: "ENOTFOUND" }), []);
    } else if (options.all) {
      callback(null, usable);
    } else {
      callback(null, first.address, first.family);
    }
  };
}

/** Reads a few KiB of the answer (so a short one frees the connection for reuse) and drops the rest. */
async function discardBody(body: Dispatcher.ResponseData["body"]) {
  try {
    await body.dump({ limit: RESPONSE_BYTES_READ });
  } catch {
    // The answer's status decided the outcome; a body cut short changes nothing.
  }
}

const failures: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EHOSTUNREACH: "address unreachable",
  ENETUNREACH: "network unreachable",
  UND_ERR_SOCKET: "connection closed before an answer",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  HPE_INVALID_CONSTANT: "the answer is not HTTP",
};

/** Plain text for the delivery log; a TLS failure keeps its code (it tells the receiver what to fix). */
function describeFailure(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = String((cause as { code?: unknown } | undefined)?.code ?? "");
  const known = failures[code];
  if (known) return known;
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO/.test(code)) return `TLS failed (${code})`;
  return code ? `request failed (${code})` : "request failed";
}
