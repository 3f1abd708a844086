// Runs autocannon in its own process: POST /agents, each request with a new
// Idempotency-Key or with none, and prints one JSON result line.
import autocannon from "autocannon";

const { url, connections, duration, keyed } = JSON.parse(process.argv[2] ?? "{}") as {
  url: string;
  connections: number;
  duration: number;
  keyed: boolean;
};
let counter = 0;

const result = await autocannon({
  url,
  connections,
  duration,
  requests: [
    {
      setupRequest: (request) => {
        const n = counter++;
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (keyed) headers["idempotency-key"] = `bench-${process.pid}-${n}`;
        return { ...request, method: "POST", path: "/agents", headers, body: `{"name":"bench-${n}","type":"worker"}` };
      },
    },
  ],
});
// Every answer that was not 2xx, by status: load shedding (503) is reported, not hidden.
const statuses = Object.fromEntries(
  Object.entries(result.statusCodeStats ?? {})
    .filter(([status]) => !status.startsWith("2"))
    .map(([status, { count = 0 }]) => [status, count]),
);
const answered = result.requests.total;
process.stdout.write(
  `${JSON.stringify({
    requests: answered,
    rps: result.requests.average,
    // Created per second: the answers that did the work.
    createdPerSecond: (answered - result.non2xx) / duration,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    statuses,
  })}\n`,
);
