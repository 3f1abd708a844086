// The worker's requests to the service, with fetch only. Every request is
// retried until the service answers something it means: 429 and 503 after
// their Retry-After, other 5xx, 408 and network errors after a backoff.
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
      const res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: payload === null ? this.headers : { ...this.headers, "content-type": "application/json" },
        body: payload,
        signal,
      });
      const text = await res.text();
      return { status: res.status, body: parsed(text), retryAfter: res.headers.get("retry-after") };
    } catch (error) {
      if (parent.aborted) throw error;
      const reason = signal.aborted ? `no answer within ${Math.round(timeoutMs)} ms` : describe(error);
      throw new Error(`${method} ${path} failed: ${reason}`, { cause: error });
    } finally {
      dispose();
    }
  }
}

function parsed(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A network error's message with its cause's code (fetch says "fetch failed", its cause ECONNREFUSED). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? `${error.message} (${code})` : error.message;
}
