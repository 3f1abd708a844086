// The login throttle of POST /token in one process: reservations taken before
// the password is hashed, keyed by account and client address together, with
// looser bounds per account and per address. Across processes:
// limits-processes.test.ts.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AppError } from "../src/errors.js";
import { counterStore } from "../src/limits/counter-store.js";
import { LoginThrottle, loginLimits } from "../src/modules/auth/login-throttle.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createUser, requestToken, type TestUser } from "./helpers/auth.js";
import { createTestDatabase, testProvider } from "./helpers/databases.js";

const { perAccountAndClient, windowSeconds } = loginLimits;
// Every failure costs a scrypt hash (~0.1 s, far more on a loaded machine).
const LOGIN_TEST_TIMEOUT = 120_000;
// A busy shared machine can stall this process past admission's lag bound; shedding is not what is tested here.
const patientUnderLoad = { MAX_EVENT_LOOP_DELAY_MS: "60000" };

let app: TestApp;
let direct: TestApp;
beforeAll(async () => {
  // Clients are told apart by the address the (trusted) loopback proxy forwards.
  [app, direct] = await Promise.all([
    startTestApp({ TRUST_PROXY: "loopback", ...patientUnderLoad }),
    startTestApp(patientUnderLoad),
  ]);
});
afterAll(() => Promise.all([app.close(), direct.close()]));

let clients = 0;
const newClient = () => `198.51.100.${++clients}`;
const from = (client: string) => ({ "x-forwarded-for": client });

async function expectThrottled(res: Response) {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= windowSeconds).toBe(true);
  expect(await res.json()).toEqual({
    error: "rate_limited",
    message: "Too many failed login attempts; try again later",
    details: { retry_after_s: retryAfter },
  });
}

/** `times` wrong passwords, one after the other, each answered 401. */
async function failLogins(target: TestApp, email: string, client: string, times: number) {
  for (let i = 0; i < times; i++) {
    const res = await requestToken(target, { username: email, password: `wrong-${i}` }, from(client));
    expect(res.status, await res.clone().text()).toBe(401);
  }
}

const login = (target: TestApp, user: TestUser, client: string) =>
  requestToken(target, { username: user.email, password: user.password }, from(client));

describe("POST /token throttling", { timeout: LOGIN_TEST_TIMEOUT }, () => {
  it(`refuses an account to a client after ${perAccountAndClient} failures, even with the right password`, async () => {
    const victim = await createUser(app);
    const guesser = newClient();
    await failLogins(app, victim.email, guesser, perAccountAndClient);
    await expectThrottled(await login(app, victim, guesser));
    // The account is the same whatever case its e-mail is written in.
    await expectThrottled(
      await requestToken(app, { username: victim.email.toUpperCase(), password: victim.password }, from(guesser)),
    );
    // The guesser's failures do not lock the account's owner out, nor the guesser's other accounts.
    expect((await login(app, victim, newClient())).status).toBe(200);
    expect((await login(app, await createUser(app), guesser)).status).toBe(200);
  });

  it("forgives a client's failures on an account once it signs in", async () => {
    const user = await createUser(app);
    const client = newClient();
    await failLogins(app, user.email, client, perAccountAndClient - 1);
    expect((await login(app, user, client)).status).toBe(200);
    await failLogins(app, user.email, client, perAccountAndClient);
    await expectThrottled(await login(app, user, client));
  });

  it("checks exactly the limit of 100 parallel wrong guesses, and refuses the right password in the burst", async () => {
    const victim = await createUser(app);
    const client = newClient();
    let limitReached!: () => void;
    const refusedOnce = new Promise<void>((resolve) => {
      limitReached = resolve;
    });
    const guesses = Array.from({ length: 100 }, (_, i) =>
      requestToken(app, { username: victim.email, password: `parallel-${i}` }, from(client)).then((res) => {
        if (res.status === 429) limitReached();
        return res.status;
      }),
    );
    // Sent while the guesses being checked are still pending: their reservations already count.
    await refusedOnce;
    const right = login(app, victim, client);
    const statuses = await Promise.all(guesses);
    expect(statuses.filter((status) => status === 401)).toHaveLength(perAccountAndClient);
    expect(statuses.filter((status) => status === 429)).toHaveLength(100 - perAccountAndClient);
    await expectThrottled(await right);
  });

  it("counts the socket's address when TRUST_PROXY is unset, whatever X-Forwarded-For says", async () => {
    const user = await createUser(direct);
    for (let i = 0; i < perAccountAndClient; i++) {
      const res = await requestToken(direct, { username: user.email, password: "wrong" }, from(newClient()));
      expect(res.status).toBe(401);
    }
    await expectThrottled(await login(direct, user, newClient()));
  });
});

// The looser bounds would take a hundred scrypt hashes over HTTP: here they are
// met at small limits, on the store the service uses on this database.
describe("LoginThrottle bounds", () => {
  const limits = { perAccountAndClient: 2, perAccount: 3, perClient: 4, windowSeconds: 60 };
  let throttle: LoginThrottle;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const database = await createTestDatabase(inject("templateDatabase"));
    drop = database.drop;
    throttle = new LoginThrottle(counterStore(testProvider, database.url), limits);
  });
  afterAll(() => drop());

  const refusal = (attempt: Promise<unknown>) =>
    attempt.then(
      () => undefined,
      (error: AppError) => ({ kind: error.kind, retryAfter: Number(error.headers?.["Retry-After"]) }),
    );

  it("bounds one account from every address, and a pair's refusal spends nothing of the account's bound", async () => {
    await throttle.reserve("10.0.0.1", "victim");
    await throttle.reserve("10.0.0.1", "victim");
    // Refused for the pair: the account's count stays at 2.
    for (let i = 0; i < 5; i++)
      expect(await refusal(throttle.reserve("10.0.0.1", "victim"))).toMatchObject({ kind: "rate_limited" });
    await throttle.reserve("10.0.0.2", "victim");
    const refused = await refusal(throttle.reserve("10.0.0.3", "victim"));
    expect(refused?.kind).toBe("rate_limited");
    expect(refused?.retryAfter).toBeGreaterThan(0);
    expect(refused?.retryAfter).toBeLessThanOrEqual(60);
    // That refusal gave back the place it took for 10.0.0.3, which still has its whole bound.
    for (let i = 0; i < limits.perClient; i++) await throttle.reserve("10.0.0.3", `other-${i}`);
  });

  it("bounds one address whatever the account, and a success gives its place back", async () => {
    for (let i = 0; i < limits.perClient - 1; i++) await throttle.reserve("10.0.1.1", `account-${i}`);
    const success = await throttle.reserve("10.0.1.1", "owner");
    await success.succeeded();
    await throttle.reserve("10.0.1.1", "owner");
    expect(await refusal(throttle.reserve("10.0.1.1", "yet-another"))).toMatchObject({ kind: "rate_limited" });
  });

  it("forgives a pair's failures on success, and an unchecked attempt gives its place back", async () => {
    await throttle.reserve("10.0.2.1", "forgiven");
    await (await throttle.reserve("10.0.2.1", "forgiven")).succeeded();
    await throttle.reserve("10.0.2.1", "forgiven");
    await (await throttle.reserve("10.0.2.1", "forgiven")).unchecked();
    await throttle.reserve("10.0.2.1", "forgiven");
    expect(await refusal(throttle.reserve("10.0.2.1", "forgiven"))).toMatchObject({ kind: "rate_limited" });
  });
});
