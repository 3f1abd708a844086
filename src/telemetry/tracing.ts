// OpenTelemetry tracing (docs/operations.md). main.ts imports this module only when
// OTEL_EXPORTER_OTLP_ENDPOINT is set, and imports the app only after
// startTracing(): the instrumentations patch http, express and pg as they load.
import { register } from "node:module";
import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { registerInstrumentations } from "@opentelemetry/instrumentation";
import { ExpressInstrumentation } from "@opentelemetry/instrumentation-express";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import packageJson from "../../package.json" with { type: "json" };
import { setTraceIdLookup } from "./trace-id.js";

/** What the instrumentations patch; the ESM loader hook wraps these modules and no others. */
const instrumentedModules = ["http", "https", "express", "pg", "pg-pool"];

/**
 * Starts exporting every request's and every PostgreSQL query's spans; returns
 * a function that flushes what is left and stops. The exporter sends OTLP/HTTP
 * with JSON bodies to OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, and reads the
 * standard OTEL_EXPORTER_OTLP_* settings (headers, timeout, a traces-only
 * endpoint) itself; OTEL_BSP_* tune the batching, OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES the resource.
 */
export function startTracing(): () => Promise<void> {
  // ES modules are not loaded through require(), where the instrumentations
  // hook by default: this loader hook (import-in-the-middle) lets them patch
  // the modules imported from now on.
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url, { data: { include: instrumentedModules } });

  const resource = defaultResource()
    .merge(
      resourceFromAttributes({ [ATTR_SERVICE_NAME]: packageJson.name, [ATTR_SERVICE_VERSION]: packageJson.version }),
    )
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // Global provider, AsyncLocalStorage context, and the W3C propagator, which
  // continues the trace of an incoming `traceparent`.
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [new HttpInstrumentation(), new ExpressInstrumentation(), new PgInstrumentation()],
  });
  setTraceIdLookup(() => trace.getActiveSpan()?.spanContext().traceId);
  return () => provider.shutdown();
}
