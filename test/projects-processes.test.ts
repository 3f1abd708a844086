import { describe, expect, it } from "vitest";
import { usersService } from "../src/modules/auth/users.js";
import { projectsService } from "../src/modules/projects/service.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { scopes } from "../src/trpc/meta.js";
import { testProvider } from "./helpers/databases.js";
import { servicesOnTestDatabase } from "./helpers/service.js";
import { isEvent, openStream } from "./helpers/sse.js";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.js";
import { secretsKey } from "./helpers/webhooks.js";

// Two service processes on one PostgreSQL database: a key revoked on one is
// refused by the other within a second, and an event of project B reaches
// neither A's stream nor A's webhook, whichever instance records or serves it.
const services = servicesOnTestDatabase({
  JWT_SECRET: "a-secret-both-instances-share-of-32-bytes",
  AUTH_POLICY: "all",
  WEBHOOK_ALLOW_PRIVATE: "true",
  WEBHOOK_SECRETS_KEY: secretsKey,
  MAX_EVENT_LOOP_DELAY_MS: "60000",
});

async function request(baseUrl: string, method: string, path: string, headers: Record<string, string>, json?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: json === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  return { status: res.status, body: (text === "" ? undefined : JSON.parse(text)) as Record<string, unknown> };
}

/** A user, admin of a new project, and a key of that project with every scope (made through `baseUrl`). */
async function adminOfNewProject(baseUrl: string, name: string) {
  const db = services.database().db;
  const email = `${name.toLowerCase()}-${Date.now()}@example.com`;
  const user = await usersService.create(db, { email, password: "a long enough password" });
  await projectsService.join(db, defaultProjectId, user.id, "member");
  const token = await fetch(`${baseUrl}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ username: email, password: "a long enough password" }).toString(),
  });
  expect(token.status).toBe(200);
  const headers = { authorization: `Bearer ${((await token.json()) as { access_token: string }).access_token}` };
  const project = await request(baseUrl, "POST", "/projects", headers, { name });
  expect(project.status).toBe(201);
  const projectId = String(project.body.id);
  const key = await request(baseUrl, "POST", `/projects/${projectId}/api-keys`, headers, { name, scopes });
  expect(key.status).toBe(201);
  return { headers, projectId, keyId: String(key.body.id), key: { "x-api-key": String(key.body.key) } };
}

describe.skipIf(testProvider !== "postgresql")("projects across two service processes on PostgreSQL", () => {
  it("a key revoked on one instance is refused by the other within a second", { timeout: 60_000 }, async () => {
    const [one, two] = [await services.start(), await services.start()];
    if (!one || !two) throw new Error("two services");
    const admin = await adminOfNewProject(one.baseUrl, "Revoking");
    // The other instance knows the key (and remembers it).
    for (let i = 0; i < 3; i++) expect((await request(two.baseUrl, "GET", "/agents", admin.key)).status).toBe(200);

    const revoked = await request(
      one.baseUrl,
      "DELETE",
      `/projects/${admin.projectId}/api-keys/${admin.keyId}`,
      admin.headers,
    );
    expect(revoked.status).toBe(204);
    const answeredAt = Date.now();
    let refusedAt: number | undefined;
    while (Date.now() - answeredAt < 5000) {
      const res = await request(two.baseUrl, "GET", "/agents", admin.key);
      if (res.status === 403) {
        refusedAt = Date.now();
        expect(res.body).toEqual({ detail: "Invalid API key" });
        break;
      }
      expect(res.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(refusedAt, "the other instance kept taking the revoked key").toBeDefined();
    expect((refusedAt ?? Number.POSITIVE_INFINITY) - answeredAt).toBeLessThan(1000);
    // And it stays refused on both.
    expect((await request(one.baseUrl, "GET", "/agents", admin.key)).status).toBe(403);
    expect((await request(two.baseUrl, "GET", "/agents", admin.key)).status).toBe(403);
  });

  it("an event of project B reaches neither A's stream nor A's webhook", { timeout: 60_000 }, async () => {
    const [one, two] = [await services.start(), await services.start()];
    if (!one || !two) throw new Error("two services");
    const receivers: Receiver[] = [await startReceiver(), await startReceiver()];
    const [toA, toB] = receivers as [Receiver, Receiver];
    try {
      const a = await adminOfNewProject(one.baseUrl, "A");
      const b = await adminOfNewProject(two.baseUrl, "B");
      expect((await request(one.baseUrl, "POST", "/webhooks", a.key, { url: toA.url, types: ["*"] })).status).toBe(201);
      expect((await request(two.baseUrl, "POST", "/webhooks", b.key, { url: toB.url, types: ["*"] })).status).toBe(201);
      const streamA = await openStream(`${one.baseUrl}/events/stream`, a.key);
      const streamA2 = await openStream(`${two.baseUrl}/events/stream`, a.key);
      try {
        // B's agent first, on both instances, then A's: once A's arrived, B's would have.
        const agentB = await request(two.baseUrl, "POST", "/agents", b.key, { name: "of B", type: "worker" });
        const agentB1 = await request(one.baseUrl, "POST", "/agents", b.key, { name: "of B too", type: "worker" });
        expect([agentB.status, agentB1.status]).toEqual([201, 201]);
        const agentA = await request(two.baseUrl, "POST", "/agents", a.key, { name: "of A", type: "worker" });
        expect(agentA.status).toBe(201);
        for (const stream of [streamA, streamA2]) {
          const [event] = await stream.until(
            1,
            (message) => isEvent(message) && (message.data ?? "").includes("of A"),
            10_000,
          );
          expect(event?.data).toContain(String(agentA.body.id));
          const seen = stream.messages.map((message) => message.data ?? "").join("\n");
          expect(seen).not.toContain("of B");
        }
        await toA.waitFor(1, 15_000);
        await toB.waitFor(2, 15_000);
        // A's webhook got A's agent: by then B's events were delivered too, to B's receiver only.
        await expect.poll(() => toA.received.some((r) => r.body.includes("of A")), { timeout: 15_000 }).toBe(true);
        expect(toA.received.map((r) => r.body).join("\n")).not.toContain("of B");
        expect(toB.received.map((r) => r.body).join("\n")).not.toContain("of A");
        expect(toB.received.filter((r) => r.body.includes("of B")).length).toBeGreaterThanOrEqual(2);
      } finally {
        streamA.close();
        streamA2.close();
      }
    } finally {
      for (const receiver of receivers) await receiver.close();
    }
  });
});
