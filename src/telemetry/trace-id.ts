// The trace id of the request being served, for its log line (docs/operations.md).
// Deliberately free of imports: with tracing off no OpenTelemetry module is
// loaded, and this answers undefined; tracing.ts plugs in the real lookup.

let lookup: () => string | undefined = () => undefined;

/** The active trace's id (32 hex digits), or undefined when tracing is off or no span is active. */
export const currentTraceId = (): string | undefined => lookup();

/** Called once by tracing.ts when tracing starts. */
export function setTraceIdLookup(traceIdOfActiveSpan: () => string | undefined): void {
  lookup = traceIdOfActiveSpan;
}
