import jwt from "jsonwebtoken";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createUser, requestToken, type TestUser } from "./helpers/auth.js";

const secret = "token-test-secret-that-is-long-enough-0123";
let app: TestApp;
let user: TestUser;
beforeAll(async () => {
  app = await startTestApp({ JWT_SECRET: secret, ACCESS_TOKEN_EXPIRE_MINUTES: "5" });
  user = await createUser(app, { email: "Ada.Lovelace@Example.com", password: "correct horse battery" });
});
afterAll(() => app.close());

const incorrect = { detail: "Incorrect username or password" };

describe("POST /token", () => {
  it("grants a bearer JWT for the user, valid for ACCESS_TOKEN_EXPIRE_MINUTES", async () => {
    const res = await requestToken(app, { grant_type: "password", username: user.email, password: user.password });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as { access_token: string };
    expect(body).toEqual({ access_token: expect.any(String), token_type: "bearer", expires_in: 300 });
    const claims = jwt.verify(body.access_token, secret, { algorithms: ["HS256"] }) as jwt.JwtPayload;
    expect(claims.sub).toBe(user.id);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(300);
  });

  it("stores e-mails lower-cased and compares them case-insensitively", async () => {
    expect(user.email).toBe("ada.lovelace@example.com");
    const res = await requestToken(app, { username: "ADA.LOVELACE@example.COM", password: user.password });
    expect(res.status).toBe(200);
  });

  it("refuses a wrong password with 401 and WWW-Authenticate: Bearer", async () => {
    const res = await requestToken(app, { username: user.email, password: "wrong horse battery" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
    expect(await res.json()).toEqual(incorrect);
  });

  it("answers an unknown e-mail exactly as a wrong password", async () => {
    const res = await requestToken(app, { username: "nobody@example.com", password: user.password });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
    expect(await res.json()).toEqual(incorrect);
  });

  it("refuses a password that differs only in case", async () => {
    const res = await requestToken(app, { username: user.email, password: user.password.toUpperCase() });
    expect(res.status).toBe(401);
  });

  // What Swagger UI's "Authorize" dialog sends: HTTP Basic client authentication
  // (empty when no client is entered, `Og==`), or client_id and client_secret in the form.
  it.each<{ fields: Record<string, string>; headers: Record<string, string> }>([
    { fields: {}, headers: { authorization: "Basic Og==", "x-requested-with": "XMLHttpRequest" } },
    { fields: {}, headers: { authorization: `Basic ${Buffer.from("docs:secret").toString("base64")}` } },
    { fields: { client_id: "docs", client_secret: "secret", scope: "read write" }, headers: {} },
  ])("accepts and ignores the client and scope an OAuth2 client adds: %j", async ({ fields, headers }) => {
    const res = await requestToken(
      app,
      { grant_type: "password", username: user.email, password: user.password, ...fields },
      headers,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ access_token: expect.any(String), token_type: "bearer", expires_in: 300 });
  });

  it("is 400 when a field is missing or the grant type is not password", async () => {
    const missing = await requestToken(app, { username: user.email });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      error: "validation_error",
      message: expect.stringContaining("password"),
      details: { issues: [{ field: "password", message: expect.any(String) }] },
    });
    const grant = await requestToken(app, { grant_type: "client_credentials", username: user.email, password: "x" });
    expect(grant.status).toBe(400);
    expect(((await grant.json()) as { details: { issues: { field: string }[] } }).details.issues[0]?.field).toBe(
      "grant_type",
    );
  });

  it("refuses a JSON body with 415: the grant is form-encoded", async () => {
    const res = await app.request("/token", {
      method: "POST",
      json: { username: user.email, password: user.password },
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({
      error: "unsupported_media_type",
      message: "Request body must be application/x-www-form-urlencoded",
    });
  });

  it("answers another method with 405 and Allow: POST", async () => {
    const res = await app.request("/token");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(await res.json()).toEqual({ detail: "Method Not Allowed" });
  });
});
