// A process with tracing on whose HTTP server answers each request with
// currentTraceId(): what a request's log line gets as its trace_id.
// Prints {"port":N} once listening. Started by test/telemetry.test.ts.
import { startTracing } from "../../src/telemetry/tracing.js";

startTracing();
const { createServer } = await import("node:http");
const { currentTraceId } = await import("../../src/telemetry/trace-id.js");

const server = createServer((_req, res) => {
  res.end(currentTraceId() ?? "none");
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 })}\n`);
});
