import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { requestToken } from "./helpers/auth.js";
import { createEmptyDatabase } from "./helpers/databases.js";
import { run } from "./helpers/spawn.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const userCreate = (args: string[], input?: string, databaseUrl = app.database.url) =>
  run("npm", ["run", "--silent", "user:create", "--", ...args], { ...process.env, DATABASE_URL: databaseUrl }, input);

describe("npm run user:create", () => {
  it("creates a user who can then sign in, with the e-mail lower-cased", { timeout: 60_000 }, async () => {
    const password = "a long enough password";
    const done = await userCreate(["--email", "Grace.Hopper@Example.com", "--password", password]);
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(
      /^Created user grace\.hopper@example\.com \(id [0-9a-f-]{36}\), member of project default\n$/,
    );

    const row = await app.database.db.prisma.user.findUniqueOrThrow({ where: { email: "grace.hopper@example.com" } });
    expect(row.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(row.passwordHash).not.toContain(password);
    const res = await requestToken(app, { username: "grace.hopper@example.com", password });
    expect(res.status).toBe(200);
  });

  it("refuses a duplicate e-mail, whatever its case, with one clear line", { timeout: 60_000 }, async () => {
    const done = await userCreate(["--email", "GRACE.HOPPER@example.com", "--password", "another password"]);
    expect(done.code).toBe(1);
    expect(done.stdout).toBe("");
    expect(done.stderr).toBe("user:create: A user with the e-mail grace.hopper@example.com already exists\n");
    expect(await app.database.db.prisma.user.count({ where: { email: "grace.hopper@example.com" } })).toBe(1);
  });

  it("reads the password from stdin with --password-stdin", { timeout: 60_000 }, async () => {
    const done = await userCreate(["--email", "alan@example.com", "--password-stdin"], "piped password\n");
    expect(done.code).toBe(0);
    const res = await requestToken(app, { username: "alan@example.com", password: "piped password" });
    expect(res.status).toBe(200);
  });

  it("refuses bad arguments before touching the database", { timeout: 60_000 }, async () => {
    const usage =
      "usage: npm run user:create -- --email <e-mail> (--password <password> | --password-stdin) " +
      "[--project <id|name>] [--role admin|member|viewer]\n";
    const badEmail = await userCreate(["--email", "not-an-email", "--password", "a long enough password"]);
    expect(badEmail.code).toBe(1);
    expect(badEmail.stderr).toBe(`user:create: email: Invalid email address\n${usage}`);
    const shortPassword = await userCreate(["--email", "short@example.com", "--password", "short"]);
    expect(shortPassword.code).toBe(1);
    expect(shortPassword.stderr).toBe(`user:create: password: must have at least 8 characters\n${usage}`);
    expect(await app.database.db.prisma.user.count()).toBe(2);
  });

  it("migrates a database nothing has migrated yet", { timeout: 60_000 }, async () => {
    const empty = await createEmptyDatabase();
    try {
      const done = await userCreate(
        ["--email", "fresh@example.com", "--password", "a long enough password"],
        "",
        empty.url,
      );
      expect(done.stderr).toBe("");
      expect(done.code).toBe(0);
      expect(done.stdout).toMatch(/^Created user fresh@example\.com /);
    } finally {
      await empty.drop();
    }
  });
});
