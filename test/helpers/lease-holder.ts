// A worker that takes a lease and then hangs without ever renewing it: a
// process to SIGKILL mid-task. Prints the lease as one line of JSON.
// API_URL, AGENT_ID; optional DURATION_SECONDS (default 5).
const response = await fetch(`${process.env.API_URL}/agents/${process.env.AGENT_ID}/leases`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    worker: `pid-${process.pid}`,
    duration_seconds: Number(process.env.DURATION_SECONDS ?? 5),
    wait_seconds: 20,
  }),
});
process.stdout.write(`${await response.text()}\n`);
// Working on it, forever.
setInterval(() => {}, 60_000);
