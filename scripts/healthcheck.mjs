// The container's health check (Dockerfile HEALTHCHECK, docker-compose.yml):
// exits 0 while GET /readyz answers 200 — the database answers and no
// migration is pending — and 1 otherwise: 503 (not ready, or shutting down),
// no answer within the timeout, or nothing listening. The image has no curl;
// Node's fetch does the request.
const port = process.env.PORT || "8000";
try {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(4000) });
  process.exit(response.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
