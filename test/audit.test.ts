import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statement } from "../src/db/index.js";
import type { AuditEventOut } from "../src/modules/audit/schemas.js";
import { purgeAuditEvents } from "../src/modules/audit/service.js";
import { scopes } from "../src/trpc/meta.js";
import {
  createKey,
  createProject,
  documentedCalls,
  type SignedIn,
  send,
  signIn,
  trpcClient,
  trpcRefusal,
} from "./helpers/projects.js";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.js";
import { startWebhookApp, type WebhookApp } from "./helpers/webhooks.js";

// The audit log (docs/api/projects.md#the-audit-log): an entry for each action
// it lists, written with the change, never holding a secret, paged by cursor.
let app: WebhookApp;
let receiver: Receiver;
let calls: Awaited<ReturnType<typeof documentedCalls>>;
let alice: SignedIn;
let bob: SignedIn;
let projectId: string;
/** Every secret the test handled: none may be in any entry. */
const secrets: string[] = [];

const auditPath = "/projects/{project_id}/audit-events";
const entriesOf = async (query = "", headers: Record<string, string> = alice.headers) => {
  const res = await calls.call("GET", `${auditPath}${query}`, { project_id: projectId }, headers);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { entries: res.body as AuditEventOut[], link: res.headers.get("link") };
};

beforeAll(async () => {
  app = await startWebhookApp({ AUTH_POLICY: "all" });
  receiver = await startReceiver();
  calls = await documentedCalls(app);
  alice = await signIn(app);
  bob = await signIn(app);
  secrets.push(alice.password, alice.token, bob.password, bob.token);
  projectId = (await createProject(app, alice, "Audited")).id;
});
afterAll(async () => {
  await app.close();
  await receiver.close();
});

describe("the audit log", () => {
  it("records each listed action, by whom, on what, for which request, with no secret", async () => {
    const p = projectId;
    const as = { ...alice.headers, "x-project-id": p };
    expect((await send(app, "PATCH", `/projects/${p}`, alice.headers, { name: "Audited too" })).status).toBe(200);
    expect(
      (await send(app, "POST", `/projects/${p}/members`, alice.headers, { email: bob.email, role: "viewer" })).status,
    ).toBe(201);
    expect(
      (await send(app, "PATCH", `/projects/${p}/members/${bob.id}`, alice.headers, { role: "member" })).status,
    ).toBe(200);
    expect((await send(app, "DELETE", `/projects/${p}/members/${bob.id}`, alice.headers)).status).toBe(204);
    const key = await createKey(app, alice.headers, p, ["agents:read"], { name: "reader" });
    secrets.push(key.key, key.key.slice(key.prefix.length + 1));
    expect((await send(app, "DELETE", `/projects/${p}/api-keys/${key.id}`, alice.headers)).status).toBe(204);
    const hook = await send(app, "POST", "/webhooks", as, { url: receiver.url, types: ["*"] });
    const webhook = hook.body as { id: string; secret: string };
    secrets.push(webhook.secret);
    expect((await send(app, "PATCH", `/webhooks/${webhook.id}`, as, { types: ["task.*"] })).status).toBe(200);
    const rotated = await send(app, "POST", `/webhooks/${webhook.id}/secrets`, as, {});
    expect(rotated.status).toBe(201);
    secrets.push((rotated.body as { secret: string }).secret);
    expect((await send(app, "DELETE", `/webhooks/${webhook.id}`, as)).status).toBe(204);
    const agent = (await send(app, "POST", "/agents", as, { name: "gone", type: "worker" })).body as { id: string };
    const task = (await send(app, "POST", `/agents/${agent.id}/tasks`, as, { title: "gone" })).body as { id: string };
    expect((await send(app, "DELETE", `/agents/${agent.id}/tasks/${task.id}`, as)).status).toBe(204);
    expect((await send(app, "DELETE", `/agents/${agent.id}`, as)).status).toBe(204);

    const { entries } = await entriesOf("?limit=1000");
    expect(entries.map((entry) => entry.action)).toEqual([
      "project.created",
      "member.added",
      "project.updated",
      "member.added",
      "member.updated",
      "member.removed",
      "api_key.created",
      "api_key.revoked",
      "webhook.created",
      "webhook.updated",
      "webhook.secret_rotated",
      "webhook.deleted",
      "task.deleted",
      "agent.deleted",
    ]);
    for (const entry of entries) {
      expect(entry).toMatchObject({
        id: expect.stringMatching(/^\d+$/),
        occurred_at: expect.stringMatching(/Z$/),
        actor: { type: "user", id: alice.id, label: alice.email },
        request_id: expect.any(String),
        client_address: "127.0.0.1",
      });
    }
    const target = (action: string) => entries.find((entry) => entry.action === action)?.target;
    expect(target("project.updated")).toEqual({ type: "project", id: p });
    expect(target("member.updated")).toEqual({ type: "user", id: bob.id });
    expect(target("api_key.revoked")).toEqual({ type: "api_key", id: key.id });
    expect(target("webhook.secret_rotated")).toEqual({ type: "webhook", id: webhook.id });
    expect(target("task.deleted")).toEqual({ type: "task", id: task.id });
    expect(target("agent.deleted")).toEqual({ type: "agent", id: agent.id });
    expect(entries.find((entry) => entry.action === "member.updated")?.details).toEqual({ role: ["viewer", "member"] });
    const text = JSON.stringify(entries);
    for (const secret of secrets) expect(text).not.toContain(secret);

    // Its request id is the one the answer carried.
    const renamed = await app.request(`/projects/${p}`, {
      method: "PATCH",
      headers: alice.headers,
      json: { name: "Audited" },
    });
    const requestId = renamed.headers.get("x-request-id");
    const { entries: last } = await entriesOf("?action=project.updated&limit=1000");
    expect(last.at(-1)?.request_id).toBe(requestId);
  });

  it("records auth.denied for a refused scope or another project, at most once a minute per credential", async () => {
    const reader = await createKey(app, alice.headers, projectId, ["agents:read"], { name: "denied" });
    const other = await createKey(app, alice.headers, projectId, ["agents:read"], { name: "denied too" });
    secrets.push(reader.key, other.key);
    for (let i = 0; i < 5; i++) {
      expect((await send(app, "POST", "/agents", reader.send, { name: "x", type: "worker" })).status).toBe(403);
    }
    const elsewhere = await createProject(app, bob, "Elsewhere");
    expect((await send(app, "GET", "/agents", { ...other.send, "x-project-id": elsewhere.id })).status).toBe(404);
    expect((await send(app, "GET", "/agents", { ...other.send, "x-project-id": elsewhere.id })).status).toBe(404);
    const { entries } = await entriesOf("?action=auth.denied");
    expect(entries.map((entry) => [entry.actor.id, entry.details])).toEqual([
      [reader.id, { required_scope: "agents:write" }],
      [other.id, { reason: "other_project" }],
    ]);
    expect(entries[0]?.actor).toEqual({ type: "api_key", id: reader.id, label: `denied (${reader.prefix})` });
    // Nothing reached the other project's log.
    const theirs = await send(app, "GET", `/projects/${elsewhere.id}/audit-events?action=auth.denied`, bob.headers);
    expect(theirs.body).toEqual([]);
    expect(JSON.stringify(entries)).not.toContain(reader.key);
  });

  it("pages by cursor with Link, filters by action (prefixes, lists) and actor; 400 for a bad filter", async () => {
    const { entries: all } = await entriesOf("?limit=1000");
    expect(all.length).toBeGreaterThan(6);
    const paged: AuditEventOut[] = [];
    let query = "?limit=4";
    for (let pages = 0; pages < 20; pages++) {
      const { entries, link } = await entriesOf(query);
      paged.push(...entries);
      if (!link) break;
      const next = /^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? "";
      expect(next).toMatch(new RegExp(`^/projects/${projectId}/audit-events\\?after=\\d+&limit=4$`));
      query = next.slice(next.indexOf("?"));
    }
    expect(paged).toEqual(all);

    const keys = (await entriesOf("?action=api_key.*")).entries;
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((entry) => entry.action.startsWith("api_key."))).toBe(true);
    const mixed = (await entriesOf("?action=project.created,member.*")).entries.map((entry) => entry.action);
    expect(new Set(mixed)).toEqual(new Set(["project.created", "member.added", "member.updated", "member.removed"]));
    const byAlice = (await entriesOf(`?actor_id=${alice.id}&limit=1000`)).entries;
    expect(byAlice.length).toBeGreaterThan(0);
    expect(byAlice.every((entry) => entry.actor.id === alice.id)).toBe(true);
    for (const bad of ["?action=nope.*", "?action=project.exploded", "?limit=0", "?limit=1001", "?after=x"]) {
      const res = await calls.call("GET", `${auditPath}${bad}`, { project_id: projectId }, alice.headers);
      expect(res.status, bad).toBe(400);
      expect(JSON.stringify(res.body), bad).toContain(bad.slice(1, bad.indexOf("=")));
    }
  });

  it("is for admins, over REST and tRPC, and offers no way to change an entry", async () => {
    await send(app, "POST", `/projects/${projectId}/members`, alice.headers, { email: bob.email, role: "member" });
    const refused = await calls.call("GET", auditPath, { project_id: projectId }, bob.headers);
    expect(refused).toMatchObject({ status: 403, body: { details: { required_scope: "admin" } } });
    const adminKey = await createKey(app, alice.headers, projectId, [...scopes], { name: "auditor" });
    expect((await calls.call("GET", auditPath, { project_id: projectId }, adminKey.send)).status).toBe(200);

    const typed = await trpcClient(app, alice.headers).audit.list.query({ project_id: projectId, action: "member.*" });
    expect(typed.map((entry) => entry.action)).toContain("member.added");
    expect(await trpcRefusal(trpcClient(app, bob.headers).audit.list.query({ project_id: projectId }))).toMatchObject({
      data: { code: "FORBIDDEN", details: { required_scope: "admin" } },
    });
    for (const method of ["PUT", "PATCH", "DELETE", "POST"]) {
      const res = await app.request(`/projects/${projectId}/audit-events`, { method, headers: alice.headers });
      expect(res.status, method).toBe(405);
    }
    expect(Object.keys(calls.document.paths).filter((path) => path.includes("audit"))).toEqual([
      "/projects/{project_id}/audit-events",
    ]);
  });

  it("keeps project.deleted after the project is gone", async () => {
    const doomed = await createProject(app, alice, "Doomed");
    expect((await send(app, "DELETE", `/projects/${doomed.id}`, alice.headers)).status).toBe(204);
    const rows = await app.database.db.all(
      statement<{ action: string; actor_id: string }, [string]>(
        "test_audit_of_project",
        "SELECT action, actor_id FROM audit_events WHERE project_id = $1 ORDER BY id",
      ),
      [doomed.id],
    );
    expect(rows.map((row) => row.action)).toEqual(["project.created", "member.added", "project.deleted"]);
    expect(rows.at(-1)?.actor_id).toBe(alice.id);
  });

  it("purges entries past retention in batches, the newer kept", async () => {
    const db = app.database.db;
    const age = statement<unknown, [Date, string]>(
      "test_audit_age",
      "UPDATE audit_events SET occurred_at = $1 WHERE project_id = $2",
    );
    const before = (await entriesOf("?limit=1000")).entries.length;
    const old = await createProject(app, alice, "Old");
    for (let i = 0; i < 30; i++) await send(app, "PATCH", `/projects/${old.id}`, alice.headers, { name: `Old ${i}` });
    await db.run(age, [new Date(Date.now() - 400 * 86_400_000), old.id]);
    const purged = await purgeAuditEvents(db, new Date(Date.now() - 365 * 86_400_000));
    expect(purged).toBe(32);
    const left = await send(app, "GET", `/projects/${old.id}/audit-events`, alice.headers);
    expect(left.body).toEqual([]);
    expect((await entriesOf("?limit=1000")).entries.length).toBe(before);
  });

  it("saw every documented status of the audit operation", () => {
    // 401, 403 for a bad key and 404 for another project: projects.test.ts sends them to every /projects path.
    expect(calls.unseen(/audit-events/, ["401", "404"])).toEqual([]);
  });
});
