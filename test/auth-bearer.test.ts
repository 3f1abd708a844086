import { generateKeyPairSync, randomUUID } from "node:crypto";
import jwt from "jsonwebtoken";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { bearer, createUser, type TestUser, tokenFor } from "./helpers/auth.js";

const secret = "bearer-test-secret-that-is-long-enough-01";
const apiKey = "bearer-test-api-key";
let app: TestApp;
let user: TestUser;
beforeAll(async () => {
  app = await startTestApp({ JWT_SECRET: secret, API_KEYS: apiKey });
  user = await createUser(app);
});
afterAll(() => app.close());

const inAMinute = () => Math.floor(Date.now() / 1000) + 60;
const sign = (claims: object, options: jwt.SignOptions = {}) =>
  jwt.sign(claims, secret, { algorithm: "HS256", ...options });
const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

const protectedWith = (headers: Record<string, string>) => app.request("/protected", { headers });

async function expectCouldNotValidate(res: Response) {
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toBe("Bearer");
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(await res.json()).toEqual({ detail: "Could not validate credentials" });
}

describe("GET /protected", () => {
  it("returns the e-mail of the token's user", async () => {
    const res = await protectedWith(bearer(await tokenFor(app, user)));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ user: user.email });
  });

  it("accepts a token we signed ourselves with the configured secret and algorithm", async () => {
    const res = await protectedWith(bearer(sign({ sub: user.id, exp: inAMinute() })));
    expect(res.status).toBe(200);
  });

  it("takes the scheme name in any case", async () => {
    const res = await protectedWith({ authorization: `bEaReR ${sign({ sub: user.id, exp: inAMinute() })}` });
    expect(res.status).toBe(200);
  });

  it("is 401 Not authenticated without an Authorization header", async () => {
    const res = await protectedWith({});
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
    expect(await res.json()).toEqual({ detail: "Not authenticated" });
  });

  it("does not take an API key in place of a user's token", async () => {
    const res = await protectedWith({ "x-api-key": apiKey });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
    expect(await res.json()).toEqual({ detail: "Not authenticated" });
  });

  describe("rejects with 401 Could not validate credentials", () => {
    it("`Bearer` with no token", async () => {
      await expectCouldNotValidate(await protectedWith({ authorization: "Bearer" }));
      await expectCouldNotValidate(await protectedWith({ authorization: "Bearer " }));
    });

    it("another scheme (Basic)", async () => {
      const basic = Buffer.from(`${user.email}:${user.password}`).toString("base64");
      await expectCouldNotValidate(await protectedWith({ authorization: `Basic ${basic}` }));
    });

    it("a token that is not a JWT", async () => {
      await expectCouldNotValidate(await protectedWith(bearer("garbage")));
      await expectCouldNotValidate(await protectedWith(bearer("a.b.c")));
    });

    it("a token without a scheme", async () => {
      await expectCouldNotValidate(await protectedWith({ authorization: sign({ sub: user.id, exp: inAMinute() }) }));
    });

    it("an unsigned token (alg none)", async () => {
      const header = segment({ alg: "none", typ: "JWT" });
      const unsigned = `${header}.${segment({ sub: user.id, exp: inAMinute() })}.`;
      await expectCouldNotValidate(await protectedWith(bearer(unsigned)));
    });

    it("a token signed with a wrong secret", async () => {
      const token = jwt.sign({ sub: user.id, exp: inAMinute() }, `${secret}-but-not-quite`, { algorithm: "HS256" });
      await expectCouldNotValidate(await protectedWith(bearer(token)));
    });

    it("a token signed with the right secret under HS512 while HS256 is configured", async () => {
      await expectCouldNotValidate(
        await protectedWith(bearer(sign({ sub: user.id, exp: inAMinute() }, { algorithm: "HS512" }))),
      );
    });

    it("a token signed with RS256 by a generated key pair", async () => {
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const token = jwt.sign({ sub: user.id, exp: inAMinute() }, privateKey, { algorithm: "RS256" });
      await expectCouldNotValidate(await protectedWith(bearer(token)));
    });

    it("an expired token", async () => {
      const token = sign({ sub: user.id, exp: Math.floor(Date.now() / 1000) - 10 });
      await expectCouldNotValidate(await protectedWith(bearer(token)));
    });

    it("a token without exp", async () => {
      await expectCouldNotValidate(await protectedWith(bearer(sign({ sub: user.id }))));
    });

    it("a token without sub", async () => {
      await expectCouldNotValidate(await protectedWith(bearer(sign({ exp: inAMinute() }))));
    });

    it("a token whose sub is not a string", async () => {
      await expectCouldNotValidate(await protectedWith(bearer(sign({ sub: 42, exp: inAMinute() }))));
      await expectCouldNotValidate(await protectedWith(bearer(sign({ sub: [user.id], exp: inAMinute() }))));
      await expectCouldNotValidate(await protectedWith(bearer(sign({ sub: { id: user.id }, exp: inAMinute() }))));
    });

    it("a token whose sub is no user, or not even an id", async () => {
      await expectCouldNotValidate(await protectedWith(bearer(sign({ sub: randomUUID(), exp: inAMinute() }))));
      await expectCouldNotValidate(await protectedWith(bearer(sign({ sub: "x\u0000y", exp: inAMinute() }))));
    });

    it("a token of a user deleted after it was issued", async () => {
      const doomed = await createUser(app);
      const token = await tokenFor(app, doomed);
      expect((await protectedWith(bearer(token))).status).toBe(200);
      await app.database.db.prisma.user.delete({ where: { id: doomed.id } });
      await expectCouldNotValidate(await protectedWith(bearer(token)));
    });
  });
});

describe("GET /trpc/auth.protected", () => {
  it("applies the same rule to the typed RPC transport", async () => {
    const ok = await app.request("/trpc/auth.protected", { headers: bearer(await tokenFor(app, user)) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ result: { data: { user: user.email } } });
    const refused = await app.request("/trpc/auth.protected");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe("Bearer");
  });
});

describe("logs", () => {
  it("never carry a password, a password hash or a token", async () => {
    const token = await tokenFor(app, user);
    await protectedWith(bearer(token));
    await protectedWith(bearer(`${token}x`));
    const { passwordHash } = await app.database.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    const logged = app.logs.map((line) => JSON.stringify(line)).join("\n");
    expect(logged).toContain('"path":"/token"');
    expect(logged).toContain('"path":"/protected"');
    for (const secretValue of [
      user.password,
      passwordHash,
      passwordHash.split("$").at(-1),
      token,
      token.split(".")[2],
    ]) {
      expect(secretValue && logged.includes(secretValue)).toBe(false);
    }
  });
});
