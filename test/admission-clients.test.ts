import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { productionQueueSettings, startTestApp, type TestApp } from "./helpers/app.js";

// Overload is requests waiting longer than the service promises, or the event
// loop saturated by concurrent work; one client at a time is neither, however
// fast it goes. The wait for a slot keeps its production default here (the
// test app turns it off otherwise); shedding on event-loop lag stays off, and
// the chaos suite runs this client with it on (see ./helpers/app.ts).
const productionAdmission = productionQueueSettings();

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** One GET on a connection of its own (no keep-alive, `Connection: close`): its status. */
function getOnNewConnection(baseUrl: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { agent: false, headers: { connection: "close" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("admission of a single client", () => {
  it("answers 5,000 sequential requests, each on a new connection, without one 503", async () => {
    app = await startTestApp(productionAdmission);
    const statuses: Record<number, number> = {};
    for (let i = 0; i < 5000; i++) {
      const status = await getOnNewConnection(app.baseUrl, "/agents?limit=1");
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
    expect(statuses).toEqual({ 200: 5000 });
  }, 120_000);
});
