import createClient from "openapi-fetch";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../generated/openapi.js";
import { fingerprintOf } from "../src/idempotency/key.js";
import { idempotencyStore } from "../src/idempotency/sql.js";
import { defaultProjectId } from "../src/resources/acting.js";
import type { TestApp } from "./helpers/app.js";
import { cloudInternalHosts } from "./helpers/cloud-metadata.js";
import { createAgent } from "./helpers/factories.js";
import { type OpenApiDocument, responseRecorder, sendRefusals } from "./helpers/openapi-responses.js";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.js";
import { startWebhookApp } from "./helpers/webhooks.js";

// The webhooks' operations through a client typed from the document, every response checked
// against it; then every documented status must have been seen.
let app: TestApp;
let guarded: TestApp;
let receiver: Receiver;
let document: OpenApiDocument;
let responses: ReturnType<typeof responseRecorder>;
const clientOf = (target: TestApp) => {
  const client = createClient<paths>({ baseUrl: target.baseUrl });
  client.use(responses.middleware);
  return client;
};
let api: ReturnType<typeof clientOf>;
let strict: ReturnType<typeof clientOf>;

beforeAll(async () => {
  app = await startWebhookApp({ BODY_LIMIT: "4kb" });
  // Private addresses refused, as in production.
  guarded = await startWebhookApp({ WEBHOOK_ALLOW_PRIVATE: "false" });
  receiver = await startReceiver();
  document = (await (await app.request("/openapi.json")).json()) as OpenApiDocument;
  responses = responseRecorder(document);
  api = clientOf(app);
  strict = clientOf(guarded);
});
afterAll(async () => {
  await receiver.close();
  await app.close();
  await guarded.close();
});
afterEach(() => {
  expect(responses.problems.splice(0)).toEqual([]);
});

const missingId = "00000000-0000-4000-8000-000000000000";
const asText = { bodySerializer: () => "x", headers: { "content-type": "text/plain" } };
const big = "x".repeat(5000);
const count = async (target: TestApp) => target.database.db.prisma.webhook.count();

describe("managing webhooks", () => {
  it("creates, reads, lists, changes and deletes a webhook; the secret shows once and is never logged", async () => {
    const created = await api.POST("/webhooks", {
      body: { url: receiver.url, types: ["task.*", "agent.created", "task.*"], description: "Billing" },
    });
    expect(created.response.status).toBe(201);
    const webhook = created.data;
    if (!webhook) throw new Error("no webhook");
    expect(created.response.headers.get("location")).toBe(`/webhooks/${webhook.id}`);
    expect(webhook).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: receiver.url,
      types: ["task.*", "agent.created"],
      agent_id: null,
      description: "Billing",
      enabled: true,
      created_at: expect.any(String),
      updated_at: webhook.created_at,
      disabled_reason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const { secret, ...shown } = webhook;
    const path = { webhook_id: webhook.id };
    expect((await api.GET("/webhooks/{webhook_id}", { params: { path } })).data).toEqual(shown);
    const listed = await api.GET("/webhooks", { params: { query: { limit: 1000 } } });
    expect(listed.data).toContainEqual(shown);

    const agent = await createAgent(app);
    const patched = await api.PATCH("/webhooks/{webhook_id}", {
      params: { path },
      body: { types: ["*"], agent_id: agent.id, description: null, enabled: false },
    });
    expect(patched.data).toMatchObject({ types: ["*"], agent_id: agent.id, description: null, enabled: false });
    const rotated = await api.POST("/webhooks/{webhook_id}/secrets", { params: { path } });
    expect(rotated.response.status).toBe(201);

    // Stored encrypted: neither secret is in the database or in any log line.
    const stored = await app.database.db.prisma.webhookSecret.findMany({ where: { webhookId: webhook.id } });
    expect(stored).toHaveLength(2);
    const keys = [secret, rotated.data?.secret ?? ""].map((value) => value.slice("whsec_".length));
    for (const key of keys) {
      expect(JSON.stringify(stored)).not.toContain(key);
      expect(JSON.stringify(app.logs)).not.toContain(key);
    }

    expect((await api.DELETE("/webhooks/{webhook_id}", { params: { path } })).response.status).toBe(204);
    const gone = await api.GET("/webhooks/{webhook_id}", { params: { path } });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toEqual({ detail: "Webhook not found" });
    expect(await app.database.db.prisma.webhookSecret.count({ where: { webhookId: webhook.id } })).toBe(0);
  });

  it("refuses bad input with 400 or 404 and stores nothing", async () => {
    const before = await count(app);
    const url = receiver.url;
    const invalid = async (body: Record<string, unknown>, field: string) => {
      const res = await api.POST("/webhooks", { body: body as never });
      expect(res.response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const error = res.error as { error: string; details: { issues: { field: string }[] } };
      expect(error.error).toBe("validation_error");
      expect(error.details.issues.map((issue) => issue.field)).toContain(field);
    };
    await invalid({ url: `http://127.0.0.1/${"a".repeat(2000)}`, types: ["*"] }, "url");
    await invalid({ url, types: [] }, "types");
    await invalid({ url, types: ["task.nope"] }, "types.0");
    await invalid({ url, types: ["agent.created", "tasks.*"] }, "types.1");
    await invalid({ url, types: "*" }, "types");
    await invalid({ url, types: ["*"], agent_id: "not-a-uuid" }, "agent_id");
    await invalid({ url, types: ["*"], description: "d".repeat(501) }, "description");
    await invalid({ url: "not a url", types: ["*"] }, "url");
    await invalid({ types: ["*"] }, "url");
    const unknownAgent = await api.POST("/webhooks", { body: { url, types: ["*"], agent_id: missingId } });
    expect(unknownAgent.response.status).toBe(404);
    expect(unknownAgent.error).toEqual({ detail: "Agent not found" });
    expect((await api.POST("/webhooks", { body: { url, types: [big] } })).response.status).toBe(413);
    expect((await api.POST("/webhooks", { body: { url, types: ["*"] }, ...asText })).response.status).toBe(415);
    expect((await api.GET("/webhooks", { params: { query: { limit: 0 } } })).response.status).toBe(400);
    expect(await count(app)).toBe(before);

    for (const id of [missingId, "not-a-uuid"]) {
      const path = { webhook_id: id };
      for (const call of [
        api.GET("/webhooks/{webhook_id}", { params: { path } }),
        api.PATCH("/webhooks/{webhook_id}", { params: { path }, body: { enabled: true } }),
        api.DELETE("/webhooks/{webhook_id}", { params: { path } }),
        api.POST("/webhooks/{webhook_id}/secrets", { params: { path } }),
        api.GET("/webhooks/{webhook_id}/deliveries", { params: { path } }),
        api.POST("/webhooks/{webhook_id}/deliveries", { params: { path }, body: { event_id: "1" } }),
      ]) {
        const { response, error } = await call;
        expect(response.status).toBe(404);
        expect(error).toEqual({ detail: "Webhook not found" });
      }
    }

    const created = await api.POST("/webhooks", { body: { url, types: ["*"] } });
    const path = { webhook_id: created.data?.id ?? "" };
    const patch = (body: Record<string, unknown>, extra = {}) =>
      api.PATCH("/webhooks/{webhook_id}", { params: { path }, body: body as never, ...extra });
    expect((await patch({})).response.status).toBe(400);
    expect((await patch({ types: [] })).response.status).toBe(400);
    expect((await patch({ enabled: "yes" })).response.status).toBe(400);
    expect((await patch({ agent_id: missingId })).response.status).toBe(404);
    expect((await patch({ description: big })).response.status).toBe(413);
    expect((await patch({ enabled: true }, asText)).response.status).toBe(415);
    const secrets = (body: string, headers: Record<string, string>) =>
      api.POST("/webhooks/{webhook_id}/secrets", {
        params: { path },
        body: {} as never,
        bodySerializer: () => body,
        headers,
      });
    expect((await secrets("{", { "content-type": "application/json" })).response.status).toBe(400);
    expect((await secrets(`{"x":"${big}"}`, { "content-type": "application/json" })).response.status).toBe(413);
    expect((await secrets("x", { "content-type": "text/plain" })).response.status).toBe(415);
    expect((await api.GET("/webhooks/{webhook_id}", { params: { path } })).data).toMatchObject({
      types: ["*"],
      enabled: true,
    });
  });

  it("needs what writing agents needs under AUTH_POLICY, reads included", async () => {
    const locked = await startWebhookApp({ AUTH_POLICY: "writes", API_KEYS: "key-1" });
    try {
      const anonymous = await locked.request("/webhooks");
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get("www-authenticate")).toBe("Bearer");
      expect(await anonymous.json()).toEqual({ detail: "Not authenticated" });
      const wrongKey = await locked.request("/webhooks", { method: "POST", headers: { "x-api-key": "nope" } });
      expect(wrongKey.status).toBe(403);
      expect(await wrongKey.json()).toEqual({ detail: "Invalid API key" });
      const created = await locked.request("/webhooks", {
        method: "POST",
        headers: { "x-api-key": "key-1" },
        json: { url: receiver.url, types: ["*"] },
      });
      expect(created.status).toBe(201);
      expect((await locked.request("/webhooks", { headers: { "x-api-key": "key-1" } })).status).toBe(200);
      const document = (await (await locked.request("/openapi.json")).json()) as OpenApiDocument & {
        paths: Record<string, Record<string, { security: unknown[] }>>;
      };
      expect(document.paths["/webhooks"]?.get?.security).toEqual([{ bearer: [] }, { oauth2: [] }, { apiKey: [] }]);
    } finally {
      await locked.close();
    }
  });
});

describe("the SSRF guard", () => {
  it("refuses loopback, private, link-local and metadata addresses and other schemes with 400; nothing is called", async () => {
    const trap = await startReceiver();
    try {
      const port = new URL(trap.url).port;
      const before = await count(guarded);
      const refused = [
        trap.url,
        `http://127.0.0.1:${port}/x`,
        `http://[::1]:${port}/x`,
        "http://10.0.0.1/hook",
        "http://192.168.1.20/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.100.100.200/",
        "http://[fd00::1]/hook",
        "http://0.0.0.0/hook",
        `http://localhost:${port}/x`,
        "file:///etc/passwd",
        "ftp://example.com/file",
      ];
      for (const url of refused) {
        const res = await strict.POST("/webhooks", { body: { url, types: ["*"] } });
        expect(res.response.status, url).toBe(400);
        const issues = (res.error as { details: { issues: { field: string; message: string }[] } }).details.issues;
        expect(issues.map((issue) => issue.field)).toEqual(["url"]);
        expect(issues[0]?.message).toMatch(/loopback, private|http or https/);
      }
      expect(await count(guarded)).toBe(before);

      // A public address literal needs no resolution; changing it to a private one is refused the same way.
      const created = await strict.POST("/webhooks", { body: { url: "http://93.184.216.34/hook", types: ["*"] } });
      expect(created.response.status).toBe(201);
      const path = { webhook_id: created.data?.id ?? "" };
      const patched = await strict.PATCH("/webhooks/{webhook_id}", { params: { path }, body: { url: trap.url } });
      expect(patched.response.status).toBe(400);
      expect((await strict.GET("/webhooks/{webhook_id}", { params: { path } })).data?.url).toBe(
        "http://93.184.216.34/hook",
      );
      await strict.DELETE("/webhooks/{webhook_id}", { params: { path } });
      expect(trap.received).toHaveLength(0);
    } finally {
      await trap.close();
    }
  });
});

describe("cloud metadata and host-internal endpoints", () => {
  it("are refused with 400 on url, with or without WEBHOOK_ALLOW_PRIVATE, on creation and change", async () => {
    const created = await api.POST("/webhooks", { body: { url: receiver.url, types: ["*"] } });
    expect(created.response.status).toBe(201);
    const path = { webhook_id: created.data?.id ?? "" };
    const before = [await count(app), await count(guarded)];
    for (const [host, whose] of cloudInternalHosts) {
      const url = `http://${host}/latest/meta-data/`;
      for (const client of [api, strict]) {
        const res = await client.POST("/webhooks", { body: { url, types: ["*"] } });
        expect(res.response.status, `${url} (${whose})`).toBe(400);
        const { issues } = (res.error as { details: { issues: { field: string; message: string }[] } }).details;
        expect(issues.map((issue) => issue.field)).toEqual(["url"]);
        expect(issues[0]?.message).toMatch(/^is or resolves to a cloud metadata|^resolves to a loopback, private/);
      }
      const patched = await api.PATCH("/webhooks/{webhook_id}", { params: { path }, body: { url } });
      expect(patched.response.status, url).toBe(400);
      expect((patched.error as { details: { issues: { message: string }[] } }).details.issues[0]?.message).toBe(
        "is or resolves to a cloud metadata or host-internal address, which is never called",
      );
    }
    expect([await count(app), await count(guarded)]).toEqual(before);
    expect((await api.GET("/webhooks/{webhook_id}", { params: { path } })).data?.url).toBe(receiver.url);
    await api.DELETE("/webhooks/{webhook_id}", { params: { path } });
  });
});

describe("the delivery log", () => {
  it("lists deliveries newest first, by status, page by page; redelivery errors are 404 and 409", async () => {
    const webhook = await api.POST("/webhooks", { body: { url: receiver.url, types: ["agent.created"] } });
    const path = { webhook_id: webhook.data?.id ?? "" };
    for (let i = 0; i < 3; i++) await createAgent(app);
    const deadline = Date.now() + 15_000;
    let log = (await api.GET("/webhooks/{webhook_id}/deliveries", { params: { path } })).data ?? [];
    while (!(log.length === 3 && log.every((d) => d.status === "succeeded")) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      log = (await api.GET("/webhooks/{webhook_id}/deliveries", { params: { path } })).data ?? [];
    }
    expect(log.map((d) => d.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    const eventIds = log.map((d) => BigInt(d.event_id));
    expect([...eventIds].sort((a, b) => (a < b ? 1 : -1))).toEqual(eventIds);

    const page = async (query: Record<string, unknown>) =>
      (await api.GET("/webhooks/{webhook_id}/deliveries", { params: { path, query: query as never } })).data ?? [];
    const first = await page({ limit: 2 });
    expect(first.map((d) => d.id)).toEqual(log.slice(0, 2).map((d) => d.id));
    expect((await page({ limit: 2, after: first[1]?.id })).map((d) => d.id)).toEqual([log[2]?.id]);
    expect(await page({ status: "failed" })).toEqual([]);
    expect((await page({ status: "succeeded", after: log[0]?.id })).map((d) => d.id)).toEqual(
      log.slice(1).map((d) => d.id),
    );
    const badQuery = await api.GET("/webhooks/{webhook_id}/deliveries", {
      params: { path, query: { status: "done" as never } },
    });
    expect(badQuery.response.status).toBe(400);
    const unknownAfter = await api.GET("/webhooks/{webhook_id}/deliveries", {
      params: { path, query: { after: missingId } },
    });
    expect(unknownAfter.response.status).toBe(404);
    expect(unknownAfter.error).toEqual({ detail: "Delivery not found" });

    const redeliver = (body: Record<string, unknown>, extra = {}) =>
      api.POST("/webhooks/{webhook_id}/deliveries", { params: { path }, body: body as never, ...extra });
    for (const eventId of ["999999999999", "abc", "-1", "99999999999999999999"]) {
      const res = await redeliver({ event_id: eventId });
      expect(res.response.status, eventId).toBe(404);
      expect(res.error).toEqual({ detail: "Event not found" });
    }
    expect((await redeliver({ event_id: 7 })).response.status).toBe(400);
    expect((await redeliver({})).response.status).toBe(400);
    expect((await redeliver({ event_id: big })).response.status).toBe(413);
    expect((await redeliver({ event_id: "1" }, asText)).response.status).toBe(415);
    await api.PATCH("/webhooks/{webhook_id}", { params: { path }, body: { enabled: false } });
    const disabled = await redeliver({ event_id: log[0]?.event_id });
    expect(disabled.response.status).toBe(409);
    expect((disabled.error as { error: string }).error).toBe("conflict");
    expect((await page({})).length).toBe(3);
    await api.PATCH("/webhooks/{webhook_id}", { params: { path }, body: { enabled: true } });
    const again = await redeliver({ event_id: log[0]?.event_id });
    expect(again.response.status).toBe(201);
    expect(again.response.headers.get("location")).toBeNull();
  });

  it("takes Idempotency-Key on its creating POSTs: replay, 409 while the first runs, 422 for another request", async () => {
    // Keys are the acting project's and the caller's own.
    const sender = `${defaultProjectId} address:127.0.0.1`;
    const claimRunning = (key: string, procedure: string, input: object) =>
      idempotencyStore.claim(
        app.database.db,
        { sender, key, fingerprint: fingerprintOf(procedure, input, sender) },
        60_000,
      );
    const header = (key: string) => ({ "Idempotency-Key": key });

    const body = { url: receiver.url, types: ["agent.*"] };
    const create = (key: string, description?: string) =>
      api.POST("/webhooks", { params: { header: header(key) }, body: { ...body, description } });
    const first = await create("webhooks-create");
    expect(first.response.status).toBe(201);
    const replayed = await create("webhooks-create");
    expect(replayed.response.headers.get("idempotent-replayed")).toBe("true");
    // The replay shows the same secret, which the kept response holds only sealed.
    expect(replayed.data).toEqual(first.data);
    const secret = (first.data?.secret ?? "").slice("whsec_".length);
    expect(secret).toHaveLength(44);
    const kept = await app.database.db.prisma.idempotencyKey.findMany();
    expect(kept.length).toBeGreaterThan(0);
    expect(JSON.stringify(kept)).not.toContain(secret);
    expect((await create("webhooks-create", "Other")).response.status).toBe(422);
    await claimRunning("webhooks-create-running", "webhooks.create", body);
    expect((await create("webhooks-create-running")).response.status).toBe(409);

    const one = { webhook_id: first.data?.id ?? "" };
    const other = { webhook_id: (await create("webhooks-create-other")).data?.id ?? "" };
    const rotate = (key: string, path: { webhook_id: string }) =>
      api.POST("/webhooks/{webhook_id}/secrets", { params: { path, header: header(key) } });
    expect((await rotate("webhooks-rotate", one)).response.status).toBe(201);
    expect((await rotate("webhooks-rotate", other)).response.status).toBe(422);
    await claimRunning("webhooks-rotate-running", "webhooks.rotateSecret", one);
    expect((await rotate("webhooks-rotate-running", one)).response.status).toBe(409);

    await createAgent(app);
    const [event] = (await (await app.request("/events?limit=1")).json()) as { id: string }[];
    const redeliver = (key: string, path: { webhook_id: string }) =>
      api.POST("/webhooks/{webhook_id}/deliveries", {
        params: { path, header: header(key) },
        body: { event_id: event?.id ?? "" },
      });
    expect((await redeliver("webhooks-redeliver", one)).response.status).toBe(201);
    expect((await redeliver("webhooks-redeliver", other)).response.status).toBe(422);
  });

  it("refuses a bad token (401), a bad key (403) and a project the caller cannot act in (404)", async () => {
    await sendRefusals(app.baseUrl, document, responses, /^\/webhooks/);
  });

  it("saw every documented status of every webhook operation but 405, 500 and 503", () => {
    // 405 answers a method the path has no operation for: openapi-method-not-allowed.test.ts sends one to every path.
    const documented = Object.entries(document.paths)
      .filter(([path]) => path.startsWith("/webhooks"))
      .flatMap(([path, item]) =>
        Object.entries(item).flatMap(([method, { responses }]) =>
          Object.keys(responses)
            .filter((status) => !["405", "500", "503"].includes(status))
            .map((status) => `${method.toUpperCase()} ${path} ${status}`),
        ),
      );
    expect(documented.length).toBeGreaterThanOrEqual(30);
    const seen = new Set(responses.observed.map(({ method, path, status }) => `${method} ${path} ${status}`));
    expect(documented.filter((response) => !seen.has(response))).toEqual([]);
  });
});
