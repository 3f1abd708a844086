import type { AddressInfo } from "node:net";
import { inject } from "vitest";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createHttpServer } from "../../src/http/server.js";
import { createLogger } from "../../src/logger.js";
import type { TestApp } from "./app.js";
import { createTestDatabase } from "./databases.js";

/**
 * The real app behind the server main.ts creates (its timeouts, its cap on
 * connections per client), on a fresh database: for tests of those limits.
 */
export async function startServedApp(env: Record<string, string>): Promise<TestApp & { port: number }> {
  const database = await createTestDatabase(inject("templateDatabase"));
  // No shedding on event-loop lag, as in ./app.ts.
  const config = loadConfig({
    SEED_SAMPLE_DATA: "false",
    MAX_EVENT_LOOP_DELAY_MS: "600000",
    MAX_QUEUE_MS: "10000",
    ...env,
    DATABASE_URL: database.url,
  });
  const shutdown = new AbortController();
  const app = createApp({ db: database.db, config, logger: createLogger("silent"), shutdown: shutdown.signal });
  const server = createHttpServer(app, config.server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    port,
    database,
    logs: [],
    request: (path, { json, headers, ...init } = {}) =>
      fetch(`${baseUrl}${path}`, {
        ...init,
        headers: json === undefined ? headers : { "content-type": "application/json", ...headers },
        body: json === undefined ? init.body : JSON.stringify(json),
      }),
    close: async () => {
      shutdown.abort();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await database.drop();
    },
  };
}
