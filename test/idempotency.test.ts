import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statement } from "../src/db/index.js";
import { fingerprintOf } from "../src/idempotency/key.js";
import { idempotencyStore } from "../src/idempotency/sql.js";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { AppRouter } from "../src/modules/index.js";
import { defaultProjectId } from "../src/resources/acting.js";
import { cipherFor } from "../src/secrets/cipher.js";
import { startTestApp, type TestApp, testConfig } from "./helpers/app.js";
import { testProvider } from "./helpers/databases.js";
import { createAgent } from "./helpers/factories.js";
import { documentedBy } from "./helpers/openapi-responses.js";

// docs/http.md over REST and tRPC, on the database the run uses.
let app: TestApp;
let documented: Awaited<ReturnType<typeof documentedBy>>;
beforeAll(async () => {
  app = await startTestApp();
  documented = await documentedBy(app);
});
afterAll(() => app.close());

let counter = 0;
const newKey = () => `key-${process.pid}-${Date.now()}-${counter++}`;

const countByName = statement<{ n: number | bigint }, [name: string]>(
  "test_idempotency_count_agents",
  "SELECT COUNT(*) AS n FROM agents WHERE name = $1",
);
const agentsNamed = async (target: TestApp, name: string) =>
  Number((await target.database.db.get(countByName, [name]))?.n);

const post = (target: TestApp, path: string, json: unknown, key?: string, headers: Record<string, string> = {}) =>
  target.request(path, {
    method: "POST",
    json,
    headers: key === undefined ? headers : { "Idempotency-Key": key, ...headers },
  });

const reusedBody = {
  error: "idempotency_key_reused",
  message: "This Idempotency-Key was used for a different request; use a new key for a new request",
};
const inFlightBody = {
  error: "conflict",
  message: "A request with this Idempotency-Key is still being processed; retry shortly",
};

describe("Idempotency-Key on POST /agents", () => {
  it("runs the first request and replays its response, status, Location and body, with nothing run twice", async () => {
    const key = newKey();
    const name = `once-${key}`;
    const first = await post(app, "/agents", { name, type: "worker" }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const created = JSON.parse(await documented(first, "POST", "/agents")) as AgentOut;

    const again = await post(app, "/agents", { type: "worker", name }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(`/agents/${created.id}`);
    expect(again.headers.get("etag")).toBe('"1"');
    expect(again.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(JSON.parse(await documented(again, "POST", "/agents"))).toEqual(created);
    expect(await agentsNamed(app, name)).toBe(1);
  });

  it("replays the first answer's body byte for byte", async () => {
    const key = newKey();
    const body = { name: `bytes-${key}`, type: "worker", metadata: { zone: "b", app: "a" } };
    const first = await post(app, "/agents", body, key);
    expect(first.status).toBe(201);
    const text = await first.text();
    const again = await post(app, "/agents", body, key);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(text);
  });

  it("keeps a refused creation's 400: the same request again gets it replayed, and nothing is created", async () => {
    const key = newKey();
    const body = { name: `refused-${key}`, type: "sideways" };
    const first = await post(app, "/agents", body, key);
    expect(first.status).toBe(400);
    const refusal = await first.json();
    const again = await post(app, "/agents", body, key);
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(refusal);
    expect(await agentsNamed(app, body.name)).toBe(0);
  });

  it.runIf(testProvider === "postgresql")(
    "on PostgreSQL the agent, its event and its kept answer commit in one transaction",
    async () => {
      const key = newKey();
      const created = (await (
        await post(app, "/agents", { name: `one-${key}`, type: "worker" }, key)
      ).json()) as AgentOut;
      const writers = statement<{ agent: string; event: string; kept: string }, [id: string, key: string]>(
        "test_idempotency_writers",
        `SELECT (SELECT xmin::text FROM agents WHERE id = $1) AS agent,
           (SELECT xmin::text FROM events WHERE agent_id = $1) AS event,
           (SELECT xmin::text FROM idempotency_keys WHERE key = $2) AS kept`,
      );
      const row = await app.database.db.get(writers, [created.id, key]);
      expect(row?.agent).toMatch(/^\d+$/);
      expect(row).toEqual({ agent: row?.agent, event: row?.agent, kept: row?.agent });
    },
  );

  it("refuses the key for another body with 422, and runs nothing", async () => {
    const key = newKey();
    expect((await post(app, "/agents", { name: `a-${key}`, type: "worker" }, key)).status).toBe(201);
    const other = await post(app, "/agents", { name: `b-${key}`, type: "worker" }, key);
    expect(other.status).toBe(422);
    expect(JSON.parse(await documented(other, "POST", "/agents"))).toEqual(reusedBody);
    expect(await agentsNamed(app, `b-${key}`)).toBe(0);
  });

  it("refuses the key for another path with 422", async () => {
    const agent = await createAgent(app);
    const key = newKey();
    expect((await post(app, `/agents/${agent.id}/tasks`, { title: "t" }, key)).status).toBe(201);
    const other = await createAgent(app);
    const res = await post(app, `/agents/${other.id}/tasks`, { title: "t" }, key);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual(reusedBody);
  });

  it.each([
    ["256 characters", "k".repeat(256)],
    ["a non-ASCII character", "clé"],
    ["a control character", "a\tb"],
  ])("refuses a key of %s with 400, and runs nothing", async (_, key) => {
    const name = `malformed-${newKey()}`;
    const res = await post(app, "/agents", { name, type: "worker" }, key);
    expect(res.status).toBe(400);
    expect(JSON.parse(await documented(res, "POST", "/agents"))).toEqual({
      error: "validation_error",
      message: "Request validation failed: Idempotency-Key: must be 1 to 255 printable ASCII characters",
      details: { issues: [{ field: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters" }] },
    });
    expect(await agentsNamed(app, name)).toBe(0);
  });

  it("accepts a key of 255 printable characters, spaces inside included", async () => {
    const key = `${"k".repeat(127)} ${"~".repeat(127)}`;
    const name = `long-${newKey()}`;
    expect((await post(app, "/agents", { name, type: "worker" }, key)).status).toBe(201);
    expect((await post(app, "/agents", { name, type: "worker" }, key)).headers.get("idempotent-replayed")).toBe("true");
  });

  it("concurrent requests with one key: one 201 that ran, the others 409 or its replay, never two agents", async () => {
    for (let round = 0; round < 5; round++) {
      const key = newKey();
      const name = `race-${key}`;
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => post(app, "/agents", { name, type: "worker" }, key)),
      );
      const ran = answers.filter((res) => res.status === 201 && res.headers.get("idempotent-replayed") === null);
      expect(ran).toHaveLength(1);
      for (const res of answers.filter((answer) => !ran.includes(answer))) {
        if (res.status === 409) {
          expect(res.headers.get("retry-after")).toBe("1");
          expect(await res.json()).toEqual(inFlightBody);
        } else {
          expect(res.status).toBe(201);
          expect(res.headers.get("idempotent-replayed")).toBe("true");
        }
      }
      expect(await agentsNamed(app, name)).toBe(1);
    }
  });
});

describe("a request still running", () => {
  const keyState = statement<{ state: string }, [key: string]>(
    "test_idempotency_key_state",
    "SELECT state FROM idempotency_keys WHERE key = $1",
  );

  it("gets 409 with Retry-After: 1, then the replay of what it answered (204 for a lease with no task)", async () => {
    const agent = await createAgent(app);
    await app.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "running" } });
    const key = newKey();
    const leases = `/agents/${agent.id}/leases`;
    const waiting = post(app, leases, { wait_seconds: 2 }, key);
    // The first request has taken the key once it shows in the table as running.
    const deadline = Date.now() + 10_000;
    while ((await app.database.db.get(keyState, [key]))?.state !== "running" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const second = await post(app, leases, { wait_seconds: 2 }, key);
    expect(second?.status).toBe(409);
    expect(second?.headers.get("retry-after")).toBe("1");
    expect(JSON.parse(await documented(second as Response, "POST", "/agents/{agent_id}/leases"))).toEqual(inFlightBody);

    const first = await waiting;
    expect(first.status).toBe(204);
    const replayed = await post(app, leases, { wait_seconds: 2 }, key);
    expect(replayed.status).toBe(204);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await replayed.text()).toBe("");
  });

  it("a creation kept in its own transaction still gets 409 while the key is held by a request running", async () => {
    const key = newKey();
    const body = { name: `held-${key}`, type: "worker" };
    // Keys are the acting project's and the caller's own.
    const sender = `${defaultProjectId} address:127.0.0.1`;
    const fingerprint = fingerprintOf("agents.create", body, sender);
    expect(await idempotencyStore.claim(app.database.db, { sender, key, fingerprint }, 60_000)).toBeDefined();
    const second = await post(app, "/agents", body, key);
    expect(second.status).toBe(409);
    expect(second.headers.get("retry-after")).toBe("1");
    expect(await second.json()).toEqual(inFlightBody);
    expect(await agentsNamed(app, body.name)).toBe(0);
  });
});

describe("a creation and its kept answer commit together", () => {
  const moveClaim = statement<unknown, [key: string]>(
    "test_idempotency_move_claim",
    "UPDATE idempotency_keys SET created_at = '2001-01-01T00:00:00.000+00:00' WHERE key = $1",
  );
  const keyState = statement<{ state: string }, [key: string]>(
    "test_idempotency_key_state_together",
    "SELECT state FROM idempotency_keys WHERE key = $1",
  );
  const taskStatus = statement<{ status: string }, [id: string]>(
    "test_idempotency_task_status",
    "SELECT status FROM tasks WHERE id = $1",
  );

  it("a lease whose key was taken over while it waited is not created: 409, and the task stays pending", async () => {
    const agent = await createAgent(app);
    await app.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "running" } });
    const key = newKey();
    const waiting = post(app, `/agents/${agent.id}/leases`, { wait_seconds: 5 }, key);
    const deadline = Date.now() + 10_000;
    while ((await app.database.db.get(keyState, [key]))?.state !== "running" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // As if the claim had lapsed and another request had taken the key: the waiting request's claim is no longer its own.
    await app.database.db.run(moveClaim, [key]);
    const task = (await (
      await app.request(`/agents/${agent.id}/tasks`, { method: "POST", json: { title: "t" } })
    ).json()) as {
      id: string;
    };
    const answer = await waiting;
    expect(answer.status).toBe(409);
    expect(await answer.json()).toEqual(inFlightBody);
    // The lease the request took was undone with the answer it could not keep.
    expect((await app.database.db.get(taskStatus, [task.id]))?.status).toBe("pending");
  });
});

describe("how a response is kept", () => {
  const keptBody = statement<{ response_body: string }, [key: string]>(
    "test_idempotency_kept_body",
    "SELECT response_body FROM idempotency_keys WHERE key = $1",
  );
  const setKeptBody = statement<unknown, [body: string, key: string]>(
    "test_idempotency_set_kept_body",
    "UPDATE idempotency_keys SET response_body = $1 WHERE key = $2",
  );

  it("an agent's creation, which holds no secret, is kept as it was answered", async () => {
    const key = newKey();
    const first = await post(app, "/agents", { name: `clear-${key}`, type: "worker" }, key);
    const created = await first.json();
    const kept = await app.database.db.get(keptBody, [key]);
    expect(JSON.parse(kept?.response_body ?? "")).toEqual(created);
  });

  it("a body kept sealed (by an earlier version) still replays", async () => {
    const key = newKey();
    const first = await post(app, "/agents", { name: `sealed-${key}`, type: "worker" }, key);
    const created = await first.json();
    // Keys are the acting project's and the caller's own.
    const sender = `${defaultProjectId} address:127.0.0.1`;
    const sealed = cipherFor(testConfig({}, app.database)).encrypt(
      JSON.stringify(created),
      `idempotency ${sender} ${key}`,
    );
    await app.database.db.run(setKeptBody, [sealed, key]);
    const again = await post(app, "/agents", { name: `sealed-${key}`, type: "worker" }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(created);
  });
});

describe("kept errors", () => {
  it("a 4xx is kept: the replay is the same error even once the cause is gone", async () => {
    const agent = await createAgent(app);
    await app.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "stopped" } });
    const key = newKey();
    const refused = await post(app, `/agents/${agent.id}/tasks`, { title: "t" }, key);
    expect(refused.status).toBe(409);
    const body = await refused.json();
    await app.request(`/agents/${agent.id}`, { method: "PATCH", json: { status: "idle" } });
    const replayed = await post(app, `/agents/${agent.id}/tasks`, { title: "t" }, key);
    expect(replayed.status).toBe(409);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await replayed.json()).toEqual(body);
    const fresh = await post(app, `/agents/${agent.id}/tasks`, { title: "t" }, newKey());
    expect(fresh.status).toBe(201);
  });
});

describe("senders", () => {
  it("keys of different API keys never collide", async () => {
    const guarded = await startTestApp({ AUTH_POLICY: "writes", API_KEYS: "first-key,second-key" });
    try {
      const key = newKey();
      const name = `sender-${key}`;
      const one = await post(guarded, "/agents", { name, type: "worker" }, key, { "X-API-Key": "first-key" });
      const two = await post(guarded, "/agents", { name, type: "worker" }, key, { "X-API-Key": "second-key" });
      expect([one.status, two.status]).toEqual([201, 201]);
      expect(two.headers.get("idempotent-replayed")).toBeNull();
      expect(await agentsNamed(guarded, name)).toBe(2);
      const again = await post(guarded, "/agents", { name, type: "worker" }, key, { "X-API-Key": "first-key" });
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(((await again.json()) as AgentOut).id).toBe(((await one.json()) as AgentOut).id);
    } finally {
      await guarded.close();
    }
  });
});

describe("the TTL", () => {
  it("a key past its TTL runs again, and the purge deletes it", async () => {
    const short = await startTestApp({ IDEMPOTENCY_TTL_HOURS: "0.0002" }); // 0.72 s
    try {
      const key = newKey();
      const name = `ttl-${key}`;
      const first = await post(short, "/agents", { name, type: "worker" }, key);
      expect(first.status).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const again = await post(short, "/agents", { name, type: "worker" }, key);
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBeNull();
      expect(await agentsNamed(short, name)).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await idempotencyStore.purge(short.database.db)).toBe(1);
      expect(await idempotencyStore.purge(short.database.db)).toBe(0);
    } finally {
      await short.close();
    }
  });
});

describe("over tRPC", () => {
  it("takes the key from the HTTP request's header: replay with Idempotent-Replayed, 422 for another input", async () => {
    const key = newKey();
    const headersSeen: Headers[] = [];
    const client = (idempotencyKey: string) =>
      createTRPCClient<AppRouter>({
        links: [
          httpLink({
            url: `${app.baseUrl}/trpc`,
            headers: { "Idempotency-Key": idempotencyKey },
            fetch: async (url, init) => {
              const res = await fetch(url, init as RequestInit);
              headersSeen.push(res.headers);
              return res;
            },
          }),
        ],
      });
    const name = `rpc-${key}`;
    const first = await client(key).agents.create.mutate({ name, type: "worker" });
    const again = await client(key).agents.create.mutate({ name, type: "worker" });
    expect(again).toEqual(first);
    expect(headersSeen.map((headers) => headers.get("idempotent-replayed"))).toEqual([null, "true"]);
    expect(await agentsNamed(app, name)).toBe(1);

    // The same operation and input over REST is the same request.
    const rest = await post(app, "/agents", { name, type: "worker" }, key);
    expect(rest.headers.get("idempotent-replayed")).toBe("true");
    expect(((await rest.json()) as AgentOut).id).toBe(first.id);

    const error = await client(key)
      .agents.create.mutate({ name: "other", type: "worker" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<AppRouter>).message).toBe(reusedBody.message);
    expect((error as TRPCClientError<AppRouter>).data).toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
      httpStatus: 422,
      error: "idempotency_key_reused",
    });
  });
});
