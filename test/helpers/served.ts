import type { AddressInfo } from "node:net";
import { inject } from "vitest";
import { createApp } from "../../src/app.js";
import { createHttpServer } from "../../src/http/server.js";
import { capturingLogger, configOrDrop, requestTo, type TestApp } from "./app.js";
import { createTestDatabase } from "./databases.js";

/**
 * The real app behind the server main.ts creates (its timeouts, its cap on
 * connections per client, its answers to requests the parser refuses), on a
 * fresh database: for tests of those limits.
 */
export async function startServedApp(env: Record<string, string>): Promise<TestApp & { port: number }> {
  const database = await createTestDatabase(inject("templateDatabase"));
  const config = await configOrDrop(env, database);
  const shutdown = new AbortController();
  const { logger, logs } = capturingLogger();
  const app = createApp({ db: database.db, config, logger, shutdown: shutdown.signal });
  const server = createHttpServer(app, config.server, logger);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    port,
    database,
    logs,
    request: requestTo(baseUrl),
    close: async () => {
      shutdown.abort();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await database.drop();
    },
  };
}
