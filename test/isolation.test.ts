import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopes } from "../src/trpc/meta.js";
import {
  createKey,
  createProject,
  projectNotFound,
  type SignedIn,
  send,
  signIn,
  trpcClient,
  trpcRefusal,
} from "./helpers/projects.js";
import { isEvent, openStream } from "./helpers/sse.js";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.js";
import { startWebhookApp, type WebhookApp, waitForDeliveries } from "./helpers/webhooks.js";

// Nothing of project B is visible or changeable from project A, on any route
// or transport: B's resources answer 404 exactly as missing ones do.
let app: WebhookApp;
let alice: SignedIn;
let bob: SignedIn;
let receiverA: Receiver;
let receiverB: Receiver;
let asA: Record<string, string>;
let asB: Record<string, string>;
const b = {} as {
  project: string;
  agent: string;
  task: string;
  lease: string;
  leasedTask: string;
  webhook: string;
  event: string;
};
const a = {} as { project: string; agent: string; task: string; webhook: string };
const missingId = "5f0c6a8e-1d2b-4c3a-9e8f-7a6b5c4d3e2f";

beforeAll(async () => {
  app = await startWebhookApp({ AUTH_POLICY: "all" });
  receiverA = await startReceiver();
  receiverB = await startReceiver();
  alice = await signIn(app);
  bob = await signIn(app);
  a.project = (await createProject(app, alice, "A")).id;
  b.project = (await createProject(app, bob, "B")).id;
  asA = (await createKey(app, alice.headers, a.project, [...scopes])).send;
  asB = (await createKey(app, bob.headers, b.project, [...scopes])).send;

  for (const [headers, into] of [
    [asA, a],
    [asB, b],
  ] as const) {
    const agent = (await send(app, "POST", "/agents", headers, { name: "agent", type: "worker" })).body as {
      id: string;
    };
    expect((await send(app, "PATCH", `/agents/${agent.id}`, headers, { status: "running" })).status).toBe(200);
    into.agent = agent.id;
    const task = (await send(app, "POST", `/agents/${agent.id}/tasks`, headers, { title: "t" })).body as { id: string };
    into.task = task.id;
    const receiver = into === a ? receiverA : receiverB;
    const hook = await send(app, "POST", "/webhooks", headers, { url: receiver.url, types: ["*"] });
    expect(hook.status).toBe(201);
    into.webhook = (hook.body as { id: string }).id;
  }
  // B: a second task, leased.
  await send(app, "POST", `/agents/${b.agent}/tasks`, asB, { title: "leased" });
  const lease = (await send(app, "POST", `/agents/${b.agent}/leases`, asB, { worker: "w" })).body as {
    id: string;
    task: { id: string };
  };
  b.lease = lease.id;
  b.leasedTask = lease.task.id;
  const events = (await send(app, "GET", `/events?agent_id=${b.agent}`, asB)).body as { id: string }[];
  b.event = events[0]?.id ?? "";
  expect(b.event).not.toBe("");
});
afterAll(async () => {
  await app.close();
  await receiverA.close();
  await receiverB.close();
});

/** B's resource, asked for from A, answers exactly what a missing one does. */
async function sameAsMissing(method: string, path: (id: string) => string, id: string, body?: unknown) {
  const theirs = await send(app, method, path(id), asA, body);
  const missing = await send(app, method, path(missingId), asA, body);
  expect(theirs.status, `${method} ${path(id)}`).toBe(404);
  expect(theirs.body, `${method} ${path(id)}`).toEqual(missing.body);
  return theirs;
}

describe("agents, tasks and leases of another project over REST", () => {
  it("are 404 as missing ones, and unlisted", async () => {
    await sameAsMissing("GET", (id) => `/agents/${id}`, b.agent);
    await sameAsMissing("PUT", (id) => `/agents/${id}`, b.agent, { name: "mine", type: "worker" });
    await sameAsMissing("PATCH", (id) => `/agents/${id}`, b.agent, { name: "mine" });
    await sameAsMissing("DELETE", (id) => `/agents/${id}`, b.agent);
    await sameAsMissing("GET", (id) => `/agents/${id}/tasks`, b.agent);
    await sameAsMissing("POST", (id) => `/agents/${id}/tasks`, b.agent, { title: "planted" });
    for (const agent of [b.agent, a.agent]) {
      await sameAsMissing("GET", (id) => `/agents/${agent}/tasks/${id}`, b.task);
      await sameAsMissing("PATCH", (id) => `/agents/${agent}/tasks/${id}`, b.task, { title: "mine" });
      await sameAsMissing("DELETE", (id) => `/agents/${agent}/tasks/${id}`, b.task);
      await sameAsMissing("GET", (id) => `/agents/${agent}/leases/${id}`, b.lease);
      await sameAsMissing("PATCH", (id) => `/agents/${agent}/leases/${id}`, b.lease, { duration_seconds: 60 });
      await sameAsMissing("DELETE", (id) => `/agents/${agent}/leases/${id}`, b.lease);
    }
    await sameAsMissing("POST", (id) => `/agents/${id}/leases`, b.agent, { worker: "thief" });
    const listed = await send(app, "GET", "/agents?limit=1000&include_total=true", asA);
    expect((listed.body as { id: string }[]).map(({ id }) => id)).toEqual([a.agent]);
    expect(listed.headers.get("x-total-count")).toBe("1");
  });

  it("refuses B's lease_id on A's task, and leaves B's lease and task as they were", async () => {
    const theirs = await send(app, "PATCH", `/agents/${a.agent}/tasks/${a.task}`, asA, {
      lease_id: b.lease,
      status: "succeeded",
      result: "stolen",
    });
    const missing = await send(app, "PATCH", `/agents/${a.agent}/tasks/${a.task}`, asA, {
      lease_id: missingId,
      status: "succeeded",
      result: "stolen",
    });
    expect(theirs.status).toBeGreaterThanOrEqual(400);
    expect(theirs.status).toBeLessThan(500);
    expect(theirs).toMatchObject({ status: missing.status, body: missing.body });
    const task = (await send(app, "GET", `/agents/${b.agent}/tasks/${b.leasedTask}`, asB)).body;
    expect(task).toMatchObject({ status: "running", lease: { id: b.lease } });
    expect((await send(app, "GET", `/agents/${b.agent}/leases/${b.lease}`, asB)).status).toBe(200);
  });
});

describe("events of another project", () => {
  it("are not in A's event page, nor reachable by B's agent_id", async () => {
    const page = (await send(app, "GET", "/events?limit=1000", asA)).body as { agent_id: string }[];
    expect(page.length).toBeGreaterThan(0);
    expect(page.every(({ agent_id }) => agent_id === a.agent)).toBe(true);
    const filtered = await send(app, "GET", `/events?agent_id=${b.agent}`, asA);
    const missing = await send(app, "GET", `/events?agent_id=${missingId}`, asA);
    expect(filtered).toMatchObject({ status: missing.status, body: missing.body });
  });

  it("never reach A's stream nor A's tRPC subscription", async () => {
    const input = encodeURIComponent(JSON.stringify({}));
    const rest = await openStream(`${app.baseUrl}/events/stream`, asA);
    const trpc = await openStream(`${app.baseUrl}/trpc/events.stream?input=${input}`, asA);
    try {
      expect(rest.status).toBe(200);
      expect(trpc.status).toBe(200);
      // B changes first, then A: once A's change arrived, B's would have.
      await send(app, "PATCH", `/agents/${b.agent}`, asB, { name: "b renamed" });
      await send(app, "PATCH", `/agents/${a.agent}`, asA, { name: "a renamed" });
      const hasA = (data?: string) => data?.includes("a renamed") ?? false;
      await rest.until(1, (message) => isEvent(message) && hasA(message.data));
      await trpc.until(1, (message) => hasA(message.data));
      for (const stream of [rest, trpc]) {
        const data = stream.messages.map((message) => message.data ?? "").join("\n");
        expect(data).not.toContain(b.agent);
        expect(data).not.toContain("b renamed");
      }
    } finally {
      rest.close();
      trpc.close();
    }
    // Asking for B's agent by filter gets nothing of it either.
    const filtered = await openStream(`${app.baseUrl}/events/stream?agent_id=${b.agent}`, asA);
    try {
      await send(app, "PATCH", `/agents/${b.agent}`, asB, { name: "b again" });
      await send(app, "PATCH", `/agents/${a.agent}`, asA, { name: "a again" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(filtered.messages.filter(isEvent)).toEqual([]);
    } finally {
      filtered.close();
    }
  });
});

describe("webhooks and deliveries of another project", () => {
  it("are 404 as missing ones on every operation, and unlisted", async () => {
    await sameAsMissing("GET", (id) => `/webhooks/${id}`, b.webhook);
    await sameAsMissing("PATCH", (id) => `/webhooks/${id}`, b.webhook, { url: receiverA.url });
    await sameAsMissing("POST", (id) => `/webhooks/${id}/secrets`, b.webhook, {});
    await sameAsMissing("GET", (id) => `/webhooks/${id}/deliveries`, b.webhook);
    await sameAsMissing("POST", (id) => `/webhooks/${id}/deliveries`, b.webhook, { event_id: b.event });
    await sameAsMissing("DELETE", (id) => `/webhooks/${id}`, b.webhook);
    const listed = (await send(app, "GET", "/webhooks", asA)).body as { id: string }[];
    expect(listed.map(({ id }) => id)).toEqual([a.webhook]);
    const hook = (await send(app, "GET", `/webhooks/${b.webhook}`, asB)).body as { url: string };
    expect(hook.url).toBe(receiverB.url);
  });

  it("refuses B's ids in A's bodies: agent_id of a webhook, event_id of a redelivery", async () => {
    for (const [method, path] of [
      ["POST", "/webhooks"],
      ["PATCH", `/webhooks/${a.webhook}`],
    ] as const) {
      const theirs = await send(app, method, path, asA, { url: receiverA.url, types: ["*"], agent_id: b.agent });
      const missing = await send(app, method, path, asA, { url: receiverA.url, types: ["*"], agent_id: missingId });
      expect(theirs.status, path).toBeGreaterThanOrEqual(400);
      expect(theirs.status, path).toBeLessThan(500);
      expect(theirs, path).toMatchObject({ status: missing.status, body: missing.body });
    }
    expect(((await send(app, "GET", `/webhooks/${a.webhook}`, asA)).body as { agent_id: null }).agent_id).toBeNull();
    const redelivery = await send(app, "POST", `/webhooks/${a.webhook}/deliveries`, asA, { event_id: b.event });
    const missingEvent = await send(app, "POST", `/webhooks/${a.webhook}/deliveries`, asA, {
      event_id: "999999999999",
    });
    expect(redelivery.status).toBeGreaterThanOrEqual(400);
    expect(redelivery.status).toBeLessThan(500);
    expect(redelivery).toMatchObject({ status: missingEvent.status, body: missingEvent.body });
  });

  it("delivers B's events to B's webhook only, and A's to A's", async () => {
    await send(app, "POST", `/agents/${b.agent}/tasks`, asB, { title: "for B's hook" });
    await send(app, "POST", `/agents/${a.agent}/tasks`, asA, { title: "for A's hook" });
    await receiverA.waitFor(1);
    await receiverB.waitFor(1);
    const deliveriesB = await waitForDeliveries(
      { ...app, request: (path, init) => app.request(path, { ...init, headers: { ...init?.headers, ...asB } }) },
      b.webhook,
      (deliveries) => deliveries.some((d) => d.status === "succeeded"),
    );
    expect(deliveriesB.length).toBeGreaterThan(0);
    // Wait for A's task's event at A's receiver: by then B's would have come too.
    await expect
      .poll(() => receiverA.received.some((r) => r.body.includes("for A's hook")), { timeout: 15_000 })
      .toBe(true);
    expect(receiverA.received.map((r) => r.body).join("\n")).not.toContain(b.agent);
    expect(receiverB.received.map((r) => r.body).join("\n")).not.toContain(a.agent);
  });
});

describe("idempotency keys of another project", () => {
  it("are not replayed across projects, for one user acting in both", async () => {
    await send(app, "POST", `/projects/${b.project}/members`, bob.headers, { email: alice.email, role: "member" });
    const post = (project: string) =>
      send(
        app,
        "POST",
        "/agents",
        { ...alice.headers, "x-project-id": project, "idempotency-key": "same-key" },
        { name: "same", type: "worker" },
      );
    const inA = await post(a.project);
    const inB = await post(b.project);
    expect(inA.status).toBe(201);
    expect(inB.status).toBe(201);
    expect(inB.headers.get("idempotent-replayed")).toBeNull();
    expect((inB.body as { id: string }).id).not.toBe((inA.body as { id: string }).id);
    expect((await post(a.project)).headers.get("idempotent-replayed")).toBe("true");
    expect(
      ((await send(app, "GET", `/agents/${(inB.body as { id: string }).id}`, asB)).body as { name: string }).name,
    ).toBe("same");
    // Leave B as the other tests found it.
    await send(app, "DELETE", `/agents/${(inB.body as { id: string }).id}`, asB);
    await send(app, "DELETE", `/agents/${(inA.body as { id: string }).id}`, asA);
  });
});

describe("over tRPC", () => {
  it("B's agent, task, lease, webhook and deliveries are NOT_FOUND from A, as missing ones", async () => {
    const client = trpcClient(app, asA);
    const refusals = async (call: (id: string) => Promise<unknown>, id: string) => {
      const theirs = await trpcRefusal(call(id));
      const missing = await trpcRefusal(call(missingId));
      expect(theirs.data).toMatchObject({ code: "NOT_FOUND", httpStatus: 404 });
      expect(theirs.message).toBe(missing.message);
    };
    await refusals((id) => client.agents.get.query({ agent_id: id }), b.agent);
    await refusals((id) => client.agents.update.mutate({ agent_id: id, name: "mine" }), b.agent);
    await refusals((id) => client.agents.remove.mutate({ agent_id: id }), b.agent);
    await refusals((id) => client.tasks.list.query({ agent_id: id }), b.agent);
    await refusals((id) => client.tasks.get.query({ agent_id: b.agent, task_id: id }), b.task);
    await refusals((id) => client.tasks.update.mutate({ agent_id: b.agent, task_id: id, title: "mine" }), b.task);
    await refusals((id) => client.tasks.remove.mutate({ agent_id: b.agent, task_id: id }), b.task);
    await refusals((id) => client.leases.create.mutate({ agent_id: id }), b.agent);
    await refusals((id) => client.leases.get.query({ agent_id: b.agent, lease_id: id }), b.lease);
    await refusals((id) => client.leases.renew.mutate({ agent_id: b.agent, lease_id: id }), b.lease);
    await refusals((id) => client.leases.release.mutate({ agent_id: b.agent, lease_id: id }), b.lease);
    await refusals((id) => client.webhooks.get.query({ webhook_id: id }), b.webhook);
    await refusals((id) => client.webhooks.update.mutate({ webhook_id: id, description: "mine" }), b.webhook);
    await refusals((id) => client.webhooks.rotateSecret.mutate({ webhook_id: id }), b.webhook);
    await refusals((id) => client.webhooks.listDeliveries.query({ webhook_id: id }), b.webhook);
    await refusals((id) => client.webhooks.redeliver.mutate({ webhook_id: id, event_id: b.event }), b.webhook);
    await refusals((id) => client.webhooks.remove.mutate({ webhook_id: id }), b.webhook);
    expect((await client.agents.list.query({})).items.map(({ id }) => id)).toEqual([a.agent]);
    expect((await client.events.list.query({ limit: 1000 })).some((e) => e.agent_id === b.agent)).toBe(false);
    // A key of A naming B is 404 Project not found.
    const naming = trpcClient(app, { ...asA, "x-project-id": b.project });
    expect(await trpcRefusal(naming.agents.list.query({}))).toMatchObject({
      message: projectNotFound.detail,
      data: { httpStatus: 404 },
    });
    // B is untouched.
    expect(await send(app, "GET", `/agents/${b.agent}`, asB)).toMatchObject({ status: 200 });
    expect(await send(app, "GET", `/webhooks/${b.webhook}`, asB)).toMatchObject({ status: 200 });
  });
});
