import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoginThrottle } from "../src/auth/login-throttle.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createUser, requestToken, type TestUser } from "./helpers/auth.js";

// The limits in force (src/auth/login-throttle.ts): 5 failures per account and
// 20 per client address within 15 minutes.
const PER_ACCOUNT = 5;
const PER_CLIENT = 20;
const WINDOW_S = 15 * 60;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

async function expectRateLimited(res: Response) {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= WINDOW_S).toBe(true);
  expect(await res.json()).toEqual({
    error: "rate_limited",
    message: "Too many failed login attempts; try again later",
    details: { retry_after_s: retryAfter },
  });
}

async function failLogins(user: { email: string }, times: number) {
  for (let i = 0; i < times; i++) {
    const res = await requestToken(app, { username: user.email, password: `wrong-${i}` });
    expect(res.status).toBe(401);
  }
}

describe("POST /token throttling (in this process's memory)", () => {
  let victim: TestUser;
  let bystander: TestUser;

  it(`refuses an account after ${PER_ACCOUNT} failures, even with the right password`, async () => {
    victim = await createUser(app);
    bystander = await createUser(app);
    await failLogins(victim, PER_ACCOUNT);
    await expectRateLimited(await requestToken(app, { username: victim.email, password: victim.password }));
    // The account is throttled whatever case its e-mail is written in.
    await expectRateLimited(
      await requestToken(app, { username: victim.email.toUpperCase(), password: victim.password }),
    );
  });

  it("leaves other accounts of the same client alone", async () => {
    const res = await requestToken(app, { username: bystander.email, password: bystander.password });
    expect(res.status).toBe(200);
  });

  it(`refuses a client after ${PER_CLIENT} failures, whichever accounts it tried`, async () => {
    // PER_ACCOUNT failures so far came from this client; unknown e-mails count too.
    for (let i = PER_ACCOUNT; i < PER_CLIENT; i++) await failLogins({ email: `nobody-${i}@example.com` }, 1);
    await expectRateLimited(await requestToken(app, { username: bystander.email, password: bystander.password }));
  });
});

describe("LoginThrottle", () => {
  const limits = { perAccount: 2, perClient: 3, windowMs: 60_000, maxKeys: 4 };

  it("lets a key try again once its oldest counted failure leaves the window", () => {
    let now = 0;
    const throttle = new LoginThrottle(limits, () => now);
    throttle.recordFailure("c", "a");
    now = 10_000;
    throttle.recordFailure("c", "a");
    expect(throttle.retryAfter("c", "a")).toBe(50);
    now = 59_001;
    expect(throttle.retryAfter("c", "a")).toBe(1);
    now = 60_000;
    expect(throttle.retryAfter("c", "a")).toBe(0);
  });

  it("clears an account's failures on success but keeps the client's", () => {
    const throttle = new LoginThrottle(limits, () => 0);
    throttle.recordFailure("c", "a");
    throttle.recordFailure("c", "a");
    throttle.recordSuccess("a");
    expect(throttle.retryAfter("c", "a")).toBe(0);
    throttle.recordFailure("c", "b");
    expect(throttle.retryAfter("c", "z")).toBe(60);
  });

  it("forgets the stalest keys beyond its bound", () => {
    const throttle = new LoginThrottle({ ...limits, perAccount: 1 }, () => 0);
    throttle.recordFailure("c1", "a");
    throttle.recordFailure("c2", "b");
    throttle.recordFailure("c3", "c");
    expect(throttle.retryAfter("x", "a")).toBe(0);
    expect(throttle.retryAfter("x", "c")).toBe(60);
  });
});
