// The rate limit and the login throttle hold across processes: two service
// instances on one PostgreSQL database, or WEB_CONCURRENCY=2 on SQLite (whose
// workers share the primary's counts). Every request opens its own connection,
// so the cluster's round-robin hands them to both workers in turn.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { usersService } from "../src/modules/auth/users.js";
import { createTestDatabase, type TestDatabase, testProvider } from "./helpers/databases.js";
import { type ServiceProcess, startService } from "./helpers/service.js";

const LIMIT = 10;
const email = "processes@example.com";
const password = "the right passphrase";

let database: TestDatabase;
let services: ServiceProcess[] = [];

/** Resolves once `count` processes of the service log that they listen. */
async function listening(service: ServiceProcess, count: number) {
  while ((service.output().stdout.match(/"msg":"listening/g)?.length ?? 0) < count) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  database = await createTestDatabase(inject("templateDatabase"));
  await usersService.create(database.db, { email, password });
  const env = {
    DATABASE_URL: database.url,
    RATE_LIMIT_PER_MINUTE: String(LIMIT),
    // A busy shared machine can stall a process past admission's lag bound; shedding is not what is tested here.
    MAX_EVENT_LOOP_DELAY_MS: "60000",
  };
  if (testProvider === "postgresql") {
    services = await Promise.all([startService(env), startService(env)]);
  } else {
    const workers = await startService({ ...env, WEB_CONCURRENCY: "2" });
    services = [workers];
    await listening(workers, 2);
  }
}, 120_000);
afterAll(async () => {
  await Promise.all(services.map((service) => service.kill()));
  await database?.drop();
});

/** One request on a connection of its own: status and headers. */
function send(baseUrl: string, method: string, path: string, body?: string) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
    const req = request(
      `${baseUrl}${path}`,
      {
        method,
        agent: false,
        headers: body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const instance = (i: number) => (services[i % services.length] as ServiceProcess).baseUrl;
const shared = testProvider === "postgresql" ? "two instances on PostgreSQL" : "WEB_CONCURRENCY=2 on SQLite";

describe(`limits shared by ${shared}`, { timeout: 120_000 }, () => {
  it(`allows ${LIMIT} requests per minute in all, each count seen once`, async () => {
    const answers = await Promise.all(Array.from({ length: 2 * LIMIT }, (_, i) => send(instance(i), "GET", "/agents")));
    const served = answers.filter((answer) => answer.status === 200);
    expect(served).toHaveLength(LIMIT);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(LIMIT);
    // One counter: every remaining count from 9 down to 0 was handed out exactly once.
    const remaining = served.map((answer) => Number(/;r=(\d+);/.exec(String(answer.headers.ratelimit))?.[1]));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
  });

  it("checks 5 guesses of one account in all, and refuses the right password after them", async () => {
    const guess = (i: number, secret: string) =>
      send(instance(i), "POST", "/token", new URLSearchParams({ username: email, password: secret }).toString());
    const statuses = (await Promise.all(Array.from({ length: 20 }, (_, i) => guess(i, `wrong ${i}`)))).map(
      (answer) => answer.status,
    );
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(15);
    for (let i = 0; i < services.length * 2; i++) expect((await guess(i, password)).status).toBe(429);
  });
});
