import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A span as OTLP/HTTP JSON carries it, attributes flattened to their values. */
export interface ReceivedSpan {
  scope: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

interface JsonSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}
interface ExportRequest {
  resourceSpans: { scopeSpans: { scope: { name: string }; spans: JsonSpan[] }[] }[];
}

/**
 * A small OTLP/HTTP receiver on loopback that reads JSON bodies only (a
 * protobuf body fails the JSON parse and is answered 400), as a collector's
 * HTTP endpoint would at /v1/traces.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const requests: { method?: string; path?: string; contentType?: string }[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({ method: req.method, path: req.url, contentType: req.headers["content-type"] });
      let body: ExportRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportRequest;
      } catch {
        res.writeHead(400).end();
        return;
      }
      for (const { scopeSpans } of body.resourceSpans ?? []) {
        for (const { scope, spans: scoped } of scopeSpans) {
          for (const span of scoped) {
            const attributes = Object.fromEntries(
              (span.attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]]),
            );
            spans.push({
              scope: scope.name,
              name: span.name,
              kind: span.kind,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              attributes,
            });
          }
        }
      }
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    /** The first span that matches, waiting for exports until the deadline. */
    waitForSpan(matches: (span: ReceivedSpan) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = spans.find(matches);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such span within ${timeoutMs} ms; received: ${JSON.stringify(spans, null, 1)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
