// Scenario 6: a burst of 100 parallel wrong guesses for one account, with the
// right password sent in the same burst, against one instance and against two
// (PostgreSQL: two processes on one database; SQLite: WEB_CONCURRENCY=2).
// At most 5 guesses may be checked (401), the rest are refused (429), and the
// right password in the burst must not get a token.
import { execFile } from "node:child_process";
import { request } from "node:http";
import { promisify } from "node:util";
import { describe, it } from "vitest";
import { type Provider, providers } from "./harness/databases.js";
import { figures } from "./harness/figures.js";
import { scenarioResources } from "./harness/scenario.js";
import { projectRoot, type Service } from "./harness/service.js";

const guesses = 100;
const maxChecked = 5;
const password = "the right passphrase";

/** `npm run user:create`, as an operator would run it. */
async function createUser(databaseUrl: string, email: string) {
  await promisify(execFile)("npm", ["run", "--silent", "user:create", "--", "--email", email, "--password", password], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
}

/** POST /token on a connection of its own from `localAddress`; resolves with the status once the request is sent and answered. */
function login(service: Service, email: string, secret: string, localAddress: string) {
  let sent!: () => void;
  const written = new Promise<void>((resolve) => {
    sent = resolve;
  });
  const answered = new Promise<number | string>((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: service.port,
        method: "POST",
        path: "/token",
        localAddress,
        agent: false,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.on("finish", sent);
    req.end(new URLSearchParams({ username: email, password: secret }).toString());
  });
  return { written, answered };
}

/** 100 wrong guesses spread over the instances, then (once they are all on the wire) the right password. */
async function burst(instances: Service[], email: string, localAddress: string) {
  const wrong = Array.from({ length: guesses }, (_, i) =>
    login(instances[i % instances.length] as Service, email, `wrong guess ${i}`, localAddress),
  );
  await Promise.all(wrong.map((w) => w.written));
  const right = login(instances[0] as Service, email, password, localAddress);
  const statuses = await Promise.all(wrong.map((w) => w.answered));
  return { statuses, right: await right.answered };
}

const twoInstances = (provider: Provider) =>
  provider === "postgresql" ? "two processes on one database" : "WEB_CONCURRENCY=2";

describe.each(providers)("login throttle burst on %s", (provider) => {
  const resources = scenarioResources();

  it(`one instance, then ${twoInstances(provider)}: at most ${maxChecked} guesses checked, the right password refused`, async (context) => {
    const f = figures(context, "6 login throttle", provider);
    let single: Service;
    let pair: Service[];
    if (provider === "postgresql") {
      const database = await resources.database(provider, "throttle");
      await Promise.all([createUser(database.url, "one@example.com"), createUser(database.url, "two@example.com")]);
      const [a, b] = await Promise.all(
        ["a", "b"].map((name) =>
          resources.service({ databaseUrl: database.url, label: `throttle-${provider}-${name}` }),
        ),
      );
      single = a as Service;
      pair = [a as Service, b as Service];
    } else {
      // Two databases: a second service starting on a file another one serves fails today (its
      // start-up migration times out on the lock), and that is not what this scenario is about.
      const [one, two] = await Promise.all([
        resources.database(provider, "throttle"),
        resources.database(provider, "throttle2"),
      ]);
      await Promise.all([createUser(one.url, "one@example.com"), createUser(two.url, "two@example.com")]);
      const [a, workers] = await Promise.all([
        resources.service({ databaseUrl: one.url, label: `throttle-${provider}` }),
        resources.service({ databaseUrl: two.url, label: `throttle-${provider}-2w`, env: { WEB_CONCURRENCY: "2" } }),
      ]);
      single = a;
      pair = [workers];
    }

    const runs = [
      // Each run from its own client address, so one run's failures cannot throttle the other's client.
      { label: "1 instance", instances: [single], email: "one@example.com", from: "127.30.0.1" },
      { label: twoInstances(provider), instances: pair, email: "two@example.com", from: "127.30.0.2" },
    ];
    for (const run of runs) {
      const { statuses, right } = await burst(run.instances, run.email, run.from);
      const count = (status: number) => statuses.filter((s) => s === status).length;
      const unanswered = statuses.filter((s) => typeof s === "string");
      f.atMost(`${run.label}: wrong guesses checked (401)`, count(401), maxChecked);
      f.info(`${run.label}: wrong guesses refused (429)`, count(429));
      f.atMost(
        `${run.label}: wrong guesses answered otherwise`,
        guesses - count(401) - count(429) - unanswered.length,
        0,
      );
      // No answer proves nothing either way, so it fails too (the right password's above all).
      f.atMost(`${run.label}: requests without an answer`, unanswered.length + (typeof right === "string" ? 1 : 0), 0);
      f.info(`${run.label}: status of the right password in the burst`, typeof right === "number" ? right : 0);
      f.atMost(`${run.label}: right password in the burst got 200`, right === 200 ? 1 : 0, 0);
      if (unanswered.length > 0 || typeof right === "string") {
        console.log(
          `${run.label}: no answer: ${JSON.stringify([...unanswered, right].filter((s) => typeof s === "string"))}`,
        );
      }
    }
    f.check();
  });
});
