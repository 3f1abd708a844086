import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { usersService } from "../../src/modules/auth/users.js";
import { projectsService } from "../../src/modules/projects/service.js";
import { defaultProjectId } from "../../src/resources/acting.js";
import type { TestApp } from "./app.js";

export interface TestUser {
  id: string;
  email: string;
  password: string;
}

/**
 * A user in the app's database, as `npm run user:create` makes one: a member
 * of the default project unless `project` and `role` say otherwise.
 */
export async function createUser(
  app: TestApp,
  fields: { email?: string; password?: string; project?: string; role?: "admin" | "member" | "viewer" } = {},
): Promise<TestUser> {
  const email = fields.email ?? `user-${randomUUID()}@example.com`;
  const password = fields.password ?? `pw-${randomUUID()}`;
  const user = await usersService.create(app.database.db, { email, password });
  await projectsService.join(app.database.db, fields.project ?? defaultProjectId, user.id, fields.role ?? "member");
  return { id: user.id, email: user.email, password };
}

/** POST /token with the form the OAuth2 password grant sends. */
export function requestToken(app: TestApp, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return app.request("/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** A valid access token for the user, obtained the way a client does. */
export async function tokenFor(app: TestApp, user: TestUser): Promise<string> {
  const res = await requestToken(app, { username: user.email, password: user.password });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
