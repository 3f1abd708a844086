import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statement } from "../src/db/index.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { eventually } from "./helpers/leases.js";
import {
  createKey,
  createProject,
  documentedCalls,
  projectNotFound,
  type SignedIn,
  send,
  signIn,
  trpcClient,
  trpcRefusal,
} from "./helpers/projects.js";

// API keys made through the API (docs/api/projects.md#api-keys), over REST and tRPC.
let app: TestApp;
let calls: Awaited<ReturnType<typeof documentedCalls>>;
let alice: SignedIn;
const seedKey = "seed-key-of-the-configured-kind";

beforeAll(async () => {
  app = await startTestApp({ AUTH_POLICY: "all", API_KEYS: seedKey });
  calls = await documentedCalls(app);
  alice = await signIn(app);
});
afterAll(() => app.close());

const keysPath = "/projects/{project_id}/api-keys";
const keyPath = "/projects/{project_id}/api-keys/{key_id}";
const invalidKey = { detail: "Invalid API key" };
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const keyRow = statement<Record<string, unknown>, [id: string]>(
  "test_api_key_row",
  "SELECT * FROM api_keys WHERE id = $1",
);

describe("API keys through the API", () => {
  it("creates a key shown once, with its prefix; lists and gets it without the key; revokes it", async () => {
    const project = await createProject(app, alice, "Keys");
    const path = { project_id: project.id };
    const created = await calls.call("POST", keysPath, path, alice.headers, {
      name: "ci",
      scopes: ["agents:read", "agents:read"],
    });
    expect(created.status).toBe(201);
    const key = created.body as { id: string; key: string; prefix: string };
    expect(key).toEqual({
      id: expect.any(String),
      name: "ci",
      scopes: ["agents:read"],
      prefix: expect.stringMatching(/^amk_[0-9a-f]{12}$/),
      created_at: expect.stringMatching(iso),
      expires_at: null,
      last_used_at: null,
      created_by: alice.id,
      revoked_at: null,
      key: expect.stringMatching(/^amk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/),
    });
    expect(key.key.startsWith(`${key.prefix}_`)).toBe(true);
    const { key: secret, ...shown } = key;

    const listed = await calls.call("GET", keysPath, path, alice.headers);
    expect(listed).toMatchObject({ status: 200, body: [shown] });
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(key.prefix.length + 1));
    expect((await calls.call("GET", keyPath, { ...path, key_id: key.id }, alice.headers)).body).toEqual(shown);

    // The key works, in its project, with its scopes.
    expect((await send(app, "GET", "/agents", { "x-api-key": secret })).status).toBe(200);
    const write = await send(app, "POST", "/agents", { "x-api-key": secret }, { name: "a", type: "worker" });
    expect(write).toMatchObject({
      status: 403,
      body: { error: "forbidden", details: { required_scope: "agents:write" } },
    });

    const revoked = await calls.call("DELETE", keyPath, { ...path, key_id: key.id }, alice.headers);
    expect(revoked.status).toBe(204);
    expect(await send(app, "GET", "/agents", { "x-api-key": secret })).toMatchObject({ status: 403, body: invalidKey });
    const after = (await calls.call("GET", keyPath, { ...path, key_id: key.id }, alice.headers)).body as {
      revoked_at: string;
    };
    expect(after.revoked_at).toMatch(iso);
    // Revoking again changes nothing.
    expect((await calls.call("DELETE", keyPath, { ...path, key_id: key.id }, alice.headers)).status).toBe(204);
    expect(
      ((await calls.call("GET", keyPath, { ...path, key_id: key.id }, alice.headers)).body as typeof after).revoked_at,
    ).toBe(after.revoked_at);
    for (const id of ["5f0c6a8e-1d2b-4c3a-9e8f-7a6b5c4d3e2f", "nope"]) {
      expect(await calls.call("GET", keyPath, { ...path, key_id: id }, alice.headers)).toMatchObject({
        status: 404,
        body: { detail: "API key not found" },
      });
      expect((await calls.call("DELETE", keyPath, { ...path, key_id: id }, alice.headers)).status).toBe(404);
    }
  });

  it("stores only a hash of the secret: no column of the row holds the key or its secret", async () => {
    const project = await createProject(app, alice, "Hashed");
    const key = await createKey(app, alice.headers, project.id, ["agents:read"]);
    const secret = key.key.slice(key.prefix.length + 1);
    const row = await app.database.db.get(keyRow, [key.id]);
    expect(row).toBeDefined();
    const stored = JSON.stringify(row, (_k, v) => (typeof v === "bigint" ? String(v) : v));
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(key.key);
    expect(row?.secret_hash).toBe(createHash("sha256").update(secret).digest("base64url"));
    // A key whose prefix is right and secret wrong (the stored hash sent as the secret, say) is refused.
    const forged = `${key.prefix}_${String(row?.secret_hash).padEnd(43, "A").slice(0, 43)}`;
    expect(await send(app, "GET", "/agents", { "x-api-key": forged })).toMatchObject({ status: 403, body: invalidKey });
  });

  it("pages the list by `after` and `limit`; 400 naming the field for a bad one", async () => {
    const project = await createProject(app, alice, "Paged");
    const path = { project_id: project.id };
    const made = [];
    for (const name of ["k1", "k2", "k3"])
      made.push(await createKey(app, alice.headers, project.id, ["tasks:read"], { name }));
    const first = await calls.call("GET", `${keysPath}?limit=2`, path, alice.headers);
    expect((first.body as { name: string }[]).map((k) => k.name)).toEqual(["k1", "k2"]);
    const rest = await app.request(`/projects/${project.id}/api-keys?limit=2&after=${made[1]?.id}`, {
      headers: alice.headers,
    });
    expect(((await rest.json()) as { name: string }[]).map((k) => k.name)).toEqual(["k3"]);
    for (const query of ["limit=0", "limit=1001", "after=nope", "after=5f0c6a8e-1d2b-4c3a-9e8f-7a6b5c4d3e2f"]) {
      const res = await calls.call("GET", `${keysPath}?${query}`, path, alice.headers);
      expect(res.status, query).toBe(400);
      expect(JSON.stringify(res.body)).toContain(query.split("=")[0]);
    }
  });

  it("refuses bad bodies with 400 naming the field: name, scopes, an expiry not in the future", async () => {
    const project = await createProject(app, alice, "Bad bodies");
    const path = { project_id: project.id };
    for (const [body, field] of [
      [{ name: "", scopes: ["admin"] }, "name"],
      [{ name: "x", scopes: [] }, "scopes"],
      [{ name: "x", scopes: ["root"] }, "scopes"],
      [{ name: "x", scopes: ["admin"], expires_at: "2020-01-01T00:00:00Z" }, "expires_at"],
      [{ name: "x", scopes: ["admin"], expires_at: "soon" }, "expires_at"],
    ] as const) {
      const res = await calls.call("POST", keysPath, path, alice.headers, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    expect((await calls.call("GET", keysPath, path, alice.headers)).body).toEqual([]);
  });

  it("an expired key is refused as any invalid key (403)", async () => {
    const project = await createProject(app, alice, "Expiring");
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const key = await createKey(app, alice.headers, project.id, ["agents:read"], { expires_at: expiresAt });
    expect(key.expires_at).toBe(expiresAt);
    expect((await send(app, "GET", "/agents", key.send)).status).toBe(200);
    await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 50);
    expect(await send(app, "GET", "/agents", key.send)).toMatchObject({ status: 403, body: invalidKey });
  });

  it("a wrong secret answers as an unknown key, whatever its length: the same 403, with nothing to tell them apart", async () => {
    const project = await createProject(app, alice, "Guessed");
    const key = await createKey(app, alice.headers, project.id, ["agents:read"]);
    const secretAt = key.key.length - 10;
    const guesses = [
      key.key.slice(0, secretAt) + (key.key[secretAt] === "A" ? "B" : "A") + key.key.slice(secretAt + 1), // one character off
      key.key.slice(0, -1), // one character short
      `${key.key}x`, // one too many
      `${key.key.slice(0, key.key.indexOf("_", key.key.indexOf("_") + 1) + 1)}x`, // its prefix, a one-character secret
      key.key.replace(
        key.prefix,
        key.prefix.replace(/.$/, (c) => (c === "a" ? "b" : "a")),
      ), // an unknown prefix, its secret
    ];
    const answers = await Promise.all(guesses.map((guess) => send(app, "GET", "/agents", { "x-api-key": guess })));
    const shapes = answers.map(({ status, body, headers }) => ({ status, body, type: headers.get("content-type") }));
    expect(shapes).toEqual(
      guesses.map(() => ({ status: 403, body: invalidKey, type: "application/json; charset=utf-8" })),
    );
    // The key itself still works: the guesses changed nothing.
    expect((await send(app, "GET", "/agents", key.send)).status).toBe(200);
  });

  it("writes last_used_at on use, at most once a minute", async () => {
    const project = await createProject(app, alice, "Used");
    const key = await createKey(app, alice.headers, project.id, ["agents:read"]);
    const read = async () =>
      (
        (await send(app, "GET", `/projects/${project.id}/api-keys/${key.id}`, alice.headers)).body as {
          last_used_at: string | null;
        }
      ).last_used_at;
    expect(await read()).toBeNull();
    expect((await send(app, "GET", "/agents", key.send)).status).toBe(200);
    const used = await eventually(read, (at) => at !== null, 10_000);
    expect(used).toMatch(iso);
    for (let i = 0; i < 5; i++) expect((await send(app, "GET", "/agents", key.send)).status).toBe(200);
    await sleep(200);
    expect(await read()).toBe(used);
  });

  it("grants only scopes its creator holds; managing keys needs admin", async () => {
    const project = await createProject(app, alice, "Granting");
    const path = { project_id: project.id };
    const keyMaker = await createKey(app, alice.headers, project.id, ["admin", "agents:read"]);
    const beyond = await calls.call("POST", keysPath, path, keyMaker.send, {
      name: "more",
      scopes: ["agents:read", "tasks:write"],
    });
    expect(beyond).toMatchObject({
      status: 403,
      body: { error: "forbidden", details: { required_scope: "tasks:write" } },
    });
    const within = await calls.call("POST", keysPath, path, keyMaker.send, { name: "less", scopes: ["agents:read"] });
    expect(within.status).toBe(201);
    expect((within.body as { created_by: string | null }).created_by).toBeNull();

    const bob = await signIn(app);
    await send(app, "POST", `/projects/${project.id}/members`, alice.headers, { email: bob.email, role: "member" });
    for (const [method, template, body] of [
      ["POST", keysPath, { name: "x", scopes: ["agents:read"] }],
      ["GET", keysPath, undefined],
      ["GET", keyPath, undefined],
      ["DELETE", keyPath, undefined],
    ] as const) {
      const res = await calls.call(method, template, { ...path, key_id: keyMaker.id }, bob.headers, body);
      expect(res, `${method} ${template}`).toMatchObject({
        status: 403,
        body: { details: { required_scope: "admin" } },
      });
    }
    expect((await calls.call("GET", keysPath, path, alice.headers)).body).toHaveLength(2);
  });
});

describe("a worker key with only tasks:work", () => {
  it("leases, renews, releases and finishes its leased tasks, and nothing else", async () => {
    const project = await createProject(app, alice, "Workers");
    const admin = { ...alice.headers, "x-project-id": project.id };
    const agent = (await send(app, "POST", "/agents", admin, { name: "runner", type: "worker" })).body as {
      id: string;
    };
    expect((await send(app, "PATCH", `/agents/${agent.id}`, admin, { status: "running" })).status).toBe(200);
    const tasks = [];
    for (const title of ["one", "two"]) {
      tasks.push(
        (await send(app, "POST", `/agents/${agent.id}/tasks`, admin, { title })).body as { id: string; title: string },
      );
    }
    const worker = (await createKey(app, alice.headers, project.id, ["tasks:work"])).send;

    const lease = await send(app, "POST", `/agents/${agent.id}/leases`, worker, { worker: "w1" });
    expect(lease.status).toBe(201);
    const { id: leaseId } = lease.body as { id: string };
    expect((await send(app, "GET", `/agents/${agent.id}/leases/${leaseId}`, worker)).status).toBe(200);
    expect(
      (await send(app, "PATCH", `/agents/${agent.id}/leases/${leaseId}`, worker, { duration_seconds: 60 })).status,
    ).toBe(200);
    expect((await send(app, "DELETE", `/agents/${agent.id}/leases/${leaseId}`, worker)).status).toBe(204);

    const again = (await send(app, "POST", `/agents/${agent.id}/leases`, worker, {})).body as {
      id: string;
      task: { id: string };
    };
    const finished = await send(app, "PATCH", `/agents/${agent.id}/tasks/${again.task.id}`, worker, {
      lease_id: again.id,
      status: "succeeded",
      result: { ok: true },
    });
    expect(finished).toMatchObject({ status: 200, body: { status: "succeeded", result: { ok: true } } });

    // Nothing else.
    const other = tasks.find(({ id }) => id !== again.task.id) as { id: string; title: string };
    const taskPath = `/agents/${agent.id}/tasks/${other.id}`;
    for (const [method, path, body, scope] of [
      ["GET", "/agents", undefined, "agents:read"],
      ["GET", `/agents/${agent.id}`, undefined, "agents:read"],
      ["POST", "/agents", { name: "x", type: "worker" }, "agents:write"],
      ["PATCH", `/agents/${agent.id}`, { name: "renamed" }, "agents:write"],
      ["DELETE", `/agents/${agent.id}`, undefined, "agents:write"],
      ["GET", `/agents/${agent.id}/tasks`, undefined, "tasks:read"],
      ["GET", taskPath, undefined, "tasks:read"],
      ["POST", `/agents/${agent.id}/tasks`, { title: "x" }, "tasks:write"],
      ["PATCH", taskPath, { title: "changed" }, "tasks:write"],
      // Finishing needs the lease: the same fields without one are a write.
      ["PATCH", taskPath, { status: "succeeded", result: 1 }, "tasks:write"],
      ["PATCH", taskPath, { lease_id: again.id, status: "succeeded", title: "sneaked" }, "tasks:write"],
      ["DELETE", taskPath, undefined, "tasks:write"],
      ["GET", "/events", undefined, "events:read"],
      ["GET", "/webhooks", undefined, "webhooks:read"],
      ["GET", `/projects/${project.id}/api-keys`, undefined, "admin"],
    ] as const) {
      const res = await send(app, method, path, worker, body);
      expect(res, `${method} ${path}`).toMatchObject({
        status: 403,
        body: { error: "forbidden", details: { required_scope: scope } },
      });
    }
    const untouched = (await send(app, "GET", taskPath, admin)).body as { status: string };
    expect(untouched).toMatchObject({ status: "pending", title: other?.title });
    expect((await send(app, "GET", `/agents/${agent.id}`, admin)).body).toMatchObject({ name: "runner" });
  });
});

describe("configured keys, deleted projects, revocation under load", () => {
  it("a key of API_KEYS acts in the default project with every scope; another project is 404", async () => {
    const seed = { "x-api-key": seedKey };
    const made = await calls.call("POST", keysPath, { project_id: defaultProjectId }, seed, {
      name: "from seed",
      scopes: ["admin"],
    });
    expect(made).toMatchObject({ status: 201, body: { created_by: null } });
    expect((await send(app, "POST", "/agents", seed, { name: "seeded", type: "worker" })).status).toBe(201);
    const project = await createProject(app, alice, "Not the seed's");
    expect(await send(app, "GET", `/projects/${project.id}/api-keys`, seed)).toMatchObject({
      status: 404,
      body: projectNotFound,
    });
    expect(await send(app, "GET", "/agents", { ...seed, "x-project-id": project.id })).toMatchObject({
      status: 404,
      body: projectNotFound,
    });
    // With AUTH_POLICY=all nothing passes without a credential.
    expect((await send(app, "GET", "/agents", {})).status).toBe(401);
  });

  it("a deleted project's keys stop working", async () => {
    const project = await createProject(app, alice, "Doomed");
    const key = await createKey(app, alice.headers, project.id, ["agents:read"]);
    expect((await send(app, "GET", "/agents", key.send)).status).toBe(200);
    expect((await send(app, "DELETE", `/projects/${project.id}`, alice.headers)).status).toBe(204);
    expect(await send(app, "GET", "/agents", key.send)).toMatchObject({ status: 403, body: invalidKey });
  });

  it("a key revoked while requests with it race: every request sent after the revocation answered is refused", async () => {
    const project = await createProject(app, alice, "Racing");
    const key = await createKey(app, alice.headers, project.id, ["agents:read"]);
    const racing = Array.from({ length: 40 }, () => send(app, "GET", "/agents", key.send));
    const revoked = send(app, "DELETE", `/projects/${project.id}/api-keys/${key.id}`, alice.headers);
    const answers = await Promise.all(racing);
    expect((await revoked).status).toBe(204);
    for (const answer of answers) expect([200, 403]).toContain(answer.status);
    const after = await Promise.all(Array.from({ length: 20 }, () => send(app, "GET", "/agents", key.send)));
    expect(after.map((answer) => answer.status)).toEqual(after.map(() => 403));
  });
});

describe("API keys over tRPC", () => {
  it("create, list, get, revoke; the same refusals", async () => {
    const project = await createProject(app, alice, "Typed keys");
    const client = trpcClient(app, alice.headers);
    const created = await client.apiKeys.create.mutate({
      project_id: project.id,
      name: "typed",
      scopes: ["tasks:work"],
    });
    expect(created.key).toMatch(/^amk_/);
    const { key: _secret, ...shown } = created;
    expect(await client.apiKeys.list.query({ project_id: project.id })).toEqual([shown]);
    expect(await client.apiKeys.get.query({ project_id: project.id, key_id: created.id })).toEqual(shown);
    const asKey = trpcClient(app, { "x-api-key": created.key });
    expect(await trpcRefusal(asKey.agents.list.query({}))).toMatchObject({
      data: { code: "FORBIDDEN", httpStatus: 403, error: "forbidden", details: { required_scope: "agents:read" } },
    });
    await client.apiKeys.revoke.mutate({ project_id: project.id, key_id: created.id });
    expect(await trpcRefusal(asKey.agents.list.query({}))).toMatchObject({
      message: "Invalid API key",
      data: { httpStatus: 403 },
    });
  });

  it("saw every documented status of the keys' operations but the body reader's and Idempotency-Key's", async () => {
    // 401 and 404 for bad credentials and other projects: projects.test.ts sends them to every /projects path.
    const project = await createProject(app, alice, "Statuses");
    for (const [method, template] of [
      ["POST", keysPath],
      ["GET", keysPath],
      ["GET", keyPath],
      ["DELETE", keyPath],
    ] as const) {
      const values = { project_id: project.id, key_id: "nope" };
      expect(
        (
          await calls.call(
            method,
            template,
            values,
            { authorization: "Bearer nope" },
            method === "POST" ? {} : undefined,
          )
        ).status,
      ).toBe(401);
      expect(
        (
          await calls.call(
            method,
            template,
            { ...values, project_id: "nope" },
            alice.headers,
            method === "POST" ? { name: "x", scopes: ["admin"] } : undefined,
          )
        ).status,
      ).toBe(404);
    }
    expect(calls.unseen(/^\/projects\/\{project_id\}\/api-keys/, ["409", "413", "415", "422"])).toEqual([]);
  });
});

describe("Idempotency-Key with a key made through the API", () => {
  it("is the key's own: two keys from one address do not share Idempotency-Keys", async () => {
    const project = await createProject(app, alice, "Own keys");
    const one = await createKey(app, alice.headers, project.id, ["agents:write"], { name: "one" });
    const two = await createKey(app, alice.headers, project.id, ["agents:write"], { name: "two" });
    const post = (key: Record<string, string>, name: string) =>
      send(app, "POST", "/agents", { ...key, "idempotency-key": "shared-key" }, { name, type: "worker" });
    const first = await post(one.send, "by one");
    const second = await post(two.send, "by two");
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect((second.body as { id: string }).id).not.toBe((first.body as { id: string }).id);
    const replay = await post(one.send, "by one");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("rate limits with keys made through the API", () => {
  it("counts each key in its own bucket once it is known, an invented key against its address", async () => {
    const limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: "3", MAX_QUEUE_MS: "60000" });
    try {
      const admin = await signIn(limited, { role: "admin" });
      const keys = [];
      for (const name of ["one", "two"]) {
        keys.push((await createKey(limited, admin.headers, defaultProjectId, ["agents:read"], { name })).send);
      }
      const [one, two] = keys as [Record<string, string>, Record<string, string>];
      const statuses = async (headers: Record<string, string>, n: number) => {
        const seen: number[] = [];
        for (let i = 0; i < n; i++) seen.push((await send(limited, "GET", "/agents", headers)).status);
        return seen;
      };
      // The first use of a key counts against the address (it is not known yet); then its own 3.
      expect(await statuses(one, 5)).toEqual([200, 200, 200, 200, 429]);
      expect(await statuses(two, 4)).toEqual([200, 200, 200, 200]);
      // The address has had two requests: one more, then refused; invented keys count there too.
      const invented = { "x-api-key": "amk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" };
      expect(await statuses(invented, 2)).toEqual([403, 429]);
    } finally {
      await limited.close();
    }
  });
});
