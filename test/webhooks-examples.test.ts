import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "./helpers/app.js";
import { root } from "./helpers/doc-snippets.js";
import { createAgent } from "./helpers/factories.js";
import { createWebhook, startWebhookApp, waitForDeliveries } from "./helpers/webhooks.js";

let app: TestApp;
beforeAll(async () => {
  app = await startWebhookApp();
});
afterAll(() => app.close());

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("examples/webhook-receiver.ts", () => {
  it("verifies the service's requests, prints each event once, and refuses a forged one", async () => {
    const port = await freePort();
    const webhook = await createWebhook(app, { url: `http://127.0.0.1:${port}/`, types: ["agent.created"] });
    const child = spawn(process.execPath, ["--import", "tsx", "examples/webhook-receiver.ts"], {
      cwd: root,
      env: { ...process.env, WEBHOOK_SECRET: webhook.secret, PORT: String(port) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      expect((await lines.next()).value).toBe(`listening ${port}`);
      const agent = await createAgent(app);
      const printed = String((await lines.next()).value).split(" ");
      expect(printed).toEqual(["event", "agent.created", expect.stringMatching(/^\d+$/), agent.id]);
      const [delivery] = await waitForDeliveries(app, webhook.id, (list) => list[0]?.status === "succeeded");
      expect(delivery?.last_status_code).toBe(204);

      // The same event again is acknowledged, not handled twice.
      const again = await app.request(`/webhooks/${webhook.id}/deliveries`, {
        method: "POST",
        json: { event_id: printed[2] },
      });
      expect(again.status).toBe(201);
      await waitForDeliveries(app, webhook.id, (list) => list.length === 2 && list[0]?.status === "succeeded");
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: "POST",
        headers: {
          "webhook-id": "1",
          "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
          "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        },
        body: "{}",
      });
      expect(forged.status).toBe(401);
      const second = await createAgent(app);
      expect(String((await lines.next()).value).split(" ")[3]).toBe(second.id);
    } finally {
      child.kill();
    }
  });
});
