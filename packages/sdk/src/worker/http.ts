// The worker's requests to the service, on the platform's node:http and
// node:https (Node.js 20+; Deno and Bun provide them too), each over a kept
// connection. Not fetch: on Node.js 20 a fetch costs the client several times
// the CPU of a node:http request, and a worker shares its machine with its
// handlers (docs/performance.md, (h)). Every request is
// retried until the service answers something it means: 429 and 503 after
// their Retry-After, other 5xx, 408 and network errors after a backoff.
import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Backoff, linkedSignal, retryAfterMs, sleep } from "./backoff.js";
import { ApiError } from "./errors.js";

export interface Answer {
  status: number;
  /** JSON parsed; undefined when empty (204); the text when not JSON. */
  body: unknown;
}

export interface SendOptions {
  /** Give up, and abort the attempt in flight, when this aborts. */
  signal: AbortSignal;
  /** Give up at this time (ms since the epoch): when what the request is for ends (a lease). */
  deadline?: number;
  /** How long one attempt may take before it counts as a network error. */
  attemptMs: number;
}

export interface Credentials {
  apiKey?: string | undefined;
  token?: string | undefined;
}

const retried = (status: number) => status === 408 || status === 429 || status >= 500;

export class Api {
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly httpAgent = new HttpAgent({ keepAlive: true });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true });

  constructor(
    baseUrl: string,
    credentials: Credentials,
    /** Told of every failure that is retried. */
    private readonly report: (error: Error) => void,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.headers = { accept: "application/json" };
    if (credentials.apiKey !== undefined) this.headers["x-api-key"] = credentials.apiKey;
    if (credentials.token !== undefined) this.headers.authorization = `Bearer ${credentials.token}`;
  }

  /** The service's answer, or undefined once `signal` aborted or `deadline` passed. */
  async send(method: string, path: string, body: unknown, options: SendOptions): Promise<Answer | undefined> {
    // Serialised once, before any attempt: a value JSON cannot hold throws to the caller.
    const payload = body === undefined ? null : JSON.stringify(body);
    const deadline = options.deadline ?? Number.POSITIVE_INFINITY;
    const backoff = new Backoff();
    for (;;) {
      const remaining = deadline - Date.now();
      if (options.signal.aborted || remaining <= 0) return undefined;
      let waitMs: number;
      try {
        const answer = await this.attempt(
          method,
          path,
          payload,
          options.signal,
          Math.min(options.attemptMs, remaining),
        );
        if (!retried(answer.status)) return answer;
        this.report(new ApiError(method, path, answer.status, answer.body));
        const told = answer.status === 429 || answer.status === 503 ? retryAfterMs(answer.retryAfter) : undefined;
        waitMs = told ?? backoff.next();
      } catch (error) {
        if (options.signal.aborted) return undefined;
        this.report(error as Error);
        waitMs = backoff.next();
      }
      if (!(await sleep(Math.min(waitMs, deadline - Date.now()), options.signal))) return undefined;
    }
  }

  private async attempt(method: string, path: string, payload: string | null, parent: AbortSignal, timeoutMs: number) {
    const { signal, dispose } = linkedSignal([parent], timeoutMs);
    try {
      const url = new URL(`${this.baseUrl}${path}`);
      const { status, text, retryAfter } = await exchange(
        url,
        {
          method,
          headers: payload === null ? this.headers : { ...this.headers, "content-type": "application/json" },
          agent: url.protocol === "https:" ? this.httpsAgent : this.httpAgent,
          signal,
        },
        payload,
      );
      return { status, body: parsed(text), retryAfter };
    } catch (error) {
      if (parent.aborted) throw error;
      const reason = signal.aborted ? `no answer within ${Math.round(timeoutMs)} ms` : describe(error);
      throw new Error(`${method} ${path} failed: ${reason}`, { cause: error });
    } finally {
      dispose();
    }
  }
}

/** One request and its whole answer as text. */
function exchange(url: URL, options: RequestOptions, payload: string | null) {
  return new Promise<{ status: number; text: string; retryAfter: string | null }>((resolve, reject) => {
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, options, (res) => {
      res.setEncoding("utf8");
      let text = "";
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => {
        const retryAfter = res.headers["retry-after"];
        resolve({ status: res.statusCode ?? 0, text, retryAfter: typeof retryAfter === "string" ? retryAfter : null });
      });
      res.on("error", reject);
    });
    request.on("error", reject);
    request.end(payload ?? undefined);
  });
}

function parsed(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A network error's message with its code ("socket hang up (ECONNRESET)"). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? `${error.message} (${code})` : error.message;
}
