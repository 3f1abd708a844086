import { randomUUID } from "node:crypto";
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentOut } from "../src/modules/agents/schemas.js";
import type { AppRouter } from "../src/modules/index.js";
import type { TaskOut } from "../src/modules/tasks/schemas.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { createAgent, createTask } from "./helpers/factories.js";

// docs/http.md: filters, order, keyset cursors with Link, X-Total-Count, on agents and tasks.
let app: TestApp;
let client: ReturnType<typeof createTRPCClient<AppRouter>>;
beforeAll(async () => {
  app = await startTestApp();
  client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${app.baseUrl}/trpc` })] });
});
afterAll(() => app.close());

type Item = { id: string; created_at: string };
const byCreation = (a: Item, b: Item) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1;
const ids = (items: Item[]) => items.map((item) => item.id);

async function get(path: string) {
  const res = await app.request(path);
  expect(res.status).toBe(200);
  return { res, items: (await res.json()) as (AgentOut & TaskOut)[] };
}

/** Every page from `path`, following Link rel="next" until a page has none. */
async function follow(path: string) {
  const pages: string[][] = [];
  let next: string | undefined = path;
  while (next) {
    const { res, items } = await get(next);
    pages.push(ids(items));
    const link = res.headers.get("link");
    next = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
    if (link) expect(next).toBeDefined();
  }
  return pages;
}

/** A fresh group of agents, told apart from every other test's by metadata. */
async function agentGroup(count: number) {
  const group = randomUUID();
  const agents: AgentOut[] = [];
  for (let i = 0; i < count; i++) {
    const metadata: Record<string, string> = { group, parity: i % 2 === 0 ? "even" : "odd" };
    if (i % 3 === 0) metadata.third = "yes";
    agents.push(await createAgent(app, { name: `agent ${i}`, metadata }));
  }
  return { group, agents, query: `metadata%5Bgroup%5D=${group}` };
}

describe("GET /agents: filters and order", () => {
  it("filters by every given metadata pair, and by status", async () => {
    const { agents, query } = await agentGroup(7);
    expect(ids((await get(`/agents?${query}`)).items)).toEqual(ids(agents));
    const even = agents.filter((_, i) => i % 2 === 0);
    expect(ids((await get(`/agents?${query}&metadata[parity]=even`)).items)).toEqual(ids(even));
    const evenThirds = agents.filter((_, i) => i % 2 === 0 && i % 3 === 0);
    expect(ids((await get(`/agents?metadata[third]=yes&${query}&metadata[parity]=even`)).items)).toEqual(
      ids(evenThirds),
    );
    expect((await get(`/agents?${query}&metadata[parity]=EVEN`)).items).toEqual([]);
    expect((await get(`/agents?${query}&metadata[missing]=x`)).items).toEqual([]);
    const [first] = agents;
    await app.request(`/agents/${first?.id}`, { method: "PATCH", json: { status: "running" } });
    expect(ids((await get(`/agents?${query}&status=running`)).items)).toEqual([first?.id]);
    expect(ids((await get(`/agents?${query}&status=idle`)).items)).toEqual(ids(agents.slice(1)));
  });

  it("follows metadata changes: PATCH and PUT move an agent in and out of a filter", async () => {
    const { agents, query } = await agentGroup(2);
    const [a, b] = agents as [AgentOut, AgentOut];
    await app.request(`/agents/${a.id}`, { method: "PATCH", json: { metadata: { parity: "odd" } } });
    expect(ids((await get(`/agents?${query}&metadata[parity]=odd`)).items)).toEqual([a.id, b.id]);
    const put = { name: "b", type: "worker", metadata: { group: "elsewhere" } };
    await app.request(`/agents/${b.id}`, { method: "PUT", json: put });
    expect(ids((await get(`/agents?${query}`)).items)).toEqual([a.id]);
  });

  it("orders by created_at then id, ascending by default, descending with order=desc", async () => {
    const { agents, query } = await agentGroup(6);
    const sorted = [...agents].sort(byCreation);
    expect(ids((await get(`/agents?${query}`)).items)).toEqual(ids(sorted));
    expect(ids((await get(`/agents?${query}&order=asc`)).items)).toEqual(ids(sorted));
    expect(ids((await get(`/agents?${query}&order=desc`)).items)).toEqual(ids(sorted).reverse());
    expect(ids((await get(`/agents?${query}&order=desc&skip=1&limit=2`)).items)).toEqual(
      ids(sorted).reverse().slice(1, 3),
    );
  });

  it("created_after and created_before are exclusive, in any zone", async () => {
    const { agents, query } = await agentGroup(3);
    const [a, b, c] = agents as [AgentOut, AgentOut, AgentOut];
    const after = await get(`/agents?${query}&created_after=${a.created_at}`);
    expect(ids(after.items)).toEqual(ids([b, c].filter((x) => x.created_at > a.created_at)));
    const before = await get(`/agents?${query}&created_before=${c.created_at}`);
    expect(ids(before.items)).toEqual(ids([a, b].filter((x) => x.created_at < c.created_at)));
    const both = await get(`/agents?${query}&created_after=${a.created_at}&created_before=${c.created_at}`);
    expect(ids(both.items)).toEqual(ids([b].filter((x) => x.created_at > a.created_at && x.created_at < c.created_at)));
    // The same instant written with an offset, and with more than milliseconds.
    const shifted = new Date(Date.parse(c.created_at) + 3_600_000).toISOString().replace("Z", "+01:00");
    expect(ids((await get(`/agents?${query}&created_before=${encodeURIComponent(shifted)}`)).items)).toEqual(
      ids(before.items),
    );
    const justAfter = c.created_at.replace("Z", "0001Z");
    const upToC = await get(`/agents?${query}&created_before=${justAfter}`);
    expect(ids(upToC.items)).toEqual(ids(agents));
    const pastA = await get(`/agents?${query}&created_after=${a.created_at.replace("Z", "0001Z")}`);
    expect(ids(pastA.items)).toEqual(ids(after.items));
  });
});

describe("GET /agents: cursors and totals", () => {
  it("pages by cursor: Link on every full page, the same query with after, every agent once", async () => {
    const { agents, query } = await agentGroup(7);
    const pages = await follow(`/agents?${query}&limit=3&include_total=true`);
    expect(pages).toEqual([ids(agents.slice(0, 3)), ids(agents.slice(3, 6)), ids(agents.slice(6))]);
    const first = await get(`/agents?${query}&limit=3`);
    const link = first.res.headers.get("link") ?? "";
    expect(link).toMatch(new RegExp(`^</agents\\?${query}&limit=3&after=[A-Za-z0-9_-]+>; rel="next"$`));
    // A page that is not full has no Link; a full last page leads to an empty one.
    expect((await get(`/agents?${query}&limit=7`)).res.headers.get("link")).toMatch(/rel="next"$/);
    const empty = /<([^>]+)>/.exec((await get(`/agents?${query}&limit=7`)).res.headers.get("link") ?? "")?.[1];
    const last = await get(empty ?? "");
    expect(last.items).toEqual([]);
    expect(last.res.headers.get("link")).toBeNull();
    expect((await get(`/agents?${query}&limit=8`)).res.headers.get("link")).toBeNull();
  });

  it("pages newest first with order=desc, and drops skip from the next link", async () => {
    const { agents, query } = await agentGroup(5);
    const newestFirst = ids([...agents].sort(byCreation).reverse());
    const pages = await follow(`/agents?order=desc&${query}&limit=2`);
    expect(pages).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);
    const skipped = await get(`/agents?skip=1&${query}&limit=2`);
    expect(skipped.res.headers.get("link")).toMatch(new RegExp(`^</agents\\?${query}&limit=2&after=[^&>]+>`));
    const rest = await follow(/<([^>]+)>/.exec(skipped.res.headers.get("link") ?? "")?.[1] ?? "");
    expect(rest.flat()).toEqual(ids(agents.slice(3)));
  });

  it("pages through every combination of filters, order and cursor the same way as one long page", async () => {
    const { agents, query } = await agentGroup(9);
    await app.request(`/agents/${agents[4]?.id}`, { method: "PATCH", json: { status: "running" } });
    const since = agents[1]?.created_at as string;
    const filters = ["", "&metadata[parity]=even", "&status=idle", `&created_after=${since}`];
    const combinations = filters.flatMap((a, i) => filters.slice(i + 1).map((b) => `${a}${b}`));
    for (const order of ["asc", "desc"]) {
      for (const filter of combinations) {
        const path = `/agents?${query}${filter}&order=${order}`;
        const whole = ids((await get(`${path}&limit=1000`)).items);
        expect((await follow(`${path}&limit=2`)).flat()).toEqual(whole);
        const counted = await get(`${path}&limit=1&include_total=true`);
        expect(counted.res.headers.get("x-total-count")).toBe(String(whole.length));
      }
    }
  });

  it("X-Total-Count counts every match, whatever the page, only when asked for", async () => {
    const { agents, query } = await agentGroup(5);
    const res = (await get(`/agents?${query}&limit=2&skip=2&include_total=true`)).res;
    expect(res.headers.get("x-total-count")).toBe("5");
    expect(
      (await get(`/agents?${query}&limit=2&metadata[parity]=odd&include_total=true`)).res.headers.get("x-total-count"),
    ).toBe("2");
    expect((await get(`/agents?${query}&include_total=false`)).res.headers.get("x-total-count")).toBeNull();
    expect((await get(`/agents?${query}`)).res.headers.get("x-total-count")).toBeNull();
    const cursor = /after=([^&>]+)/.exec((await get(`/agents?${query}&limit=2`)).res.headers.get("link") ?? "")?.[1];
    const later = await get(`/agents?${query}&limit=2&after=${cursor}&include_total=true`);
    expect(later.res.headers.get("x-total-count")).toBe("5");
    expect(ids(later.items)).toEqual(ids(agents.slice(2, 4)));
    const all = (await get("/agents?limit=1&include_total=true")).res.headers.get("x-total-count");
    expect(Number(all)).toBe((await get("/agents?limit=1000")).items.length);
  });

  it("HEAD answers with the same Link and X-Total-Count and no body", async () => {
    const { query } = await agentGroup(3);
    const path = `/agents?${query}&limit=2&include_total=true`;
    const [got, head] = [await app.request(path), await app.request(path, { method: "HEAD" })];
    expect(head.status).toBe(200);
    expect(head.headers.get("link")).toBe(got.headers.get("link"));
    expect(head.headers.get("x-total-count")).toBe("3");
    expect(await head.text()).toBe("");
  });
});

describe("GET /agents: bad list parameters are 400", () => {
  const validCursor = Buffer.from(`2026-11-25T22:39:57.123Z|${randomUUID()}`).toString("base64url");
  it.each([
    ["order=sideways", "order"],
    ["order=ASC", "order"],
    ["after=garbage", "after"],
    ["after=", "after"],
    [`after=${Buffer.from("2026-11-25T22:39:57.123Z|not-a-uuid").toString("base64url")}`, "after"],
    [`after=${Buffer.from("yesterday|4b1c5e0a-8f3d-4c2b-9a6e-1f2d3c4b5a69").toString("base64url")}`, "after"],
    [`after=${validCursor}&skip=1`, "skip"],
    [`after=${validCursor}&after=${validCursor}`, "after"],
    ["created_after=yesterday", "created_after"],
    ["created_after=2026-11-25", "created_after"],
    ["created_before=2026-13-01T00:00:00Z", "created_before"],
    ["include_total=yes", "include_total"],
    ["include_total=1", "include_total"],
    ["metadata=team", "metadata"],
    ["metadata[a%20b]=x", "metadata.a b"],
    [`metadata[${"k".repeat(41)}]=x`, `metadata.${"k".repeat(41)}`],
    ["metadata[__proto__]=x", "metadata.__proto__"],
    [`metadata[a]=${"x".repeat(501)}`, "metadata.a"],
    ["metadata[a]=1&metadata[a]=2", "metadata.a"],
    ["metadata[a]=%00", "metadata.a"],
    [Array.from({ length: 51 }, (_, i) => `metadata[k${i}]=v`).join("&"), "metadata"],
  ])("?%s names %s", async (query, field) => {
    const res = await app.request(`/agents?${query}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; details: { issues: { field: string }[] } };
    expect(body.error).toBe("validation_error");
    expect(body.details.issues.map((issue) => issue.field)).toEqual([field]);
  });

  it("says exactly what is wrong", async () => {
    const res = await app.request("/agents?order=sideways&after=x");
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toEqual({
      error: "validation_error",
      message: expect.stringContaining("order"),
      details: {
        issues: [
          { field: "order", message: expect.any(String) },
          { field: "after", message: "is not a cursor" },
        ],
      },
    });
    const skip = await app.request(`/agents?skip=2&after=${validCursor}`);
    expect((await skip.json()) as unknown).toEqual({
      error: "validation_error",
      message: "Request validation failed: skip: must be 0 with after",
      details: { issues: [{ field: "skip", message: "must be 0 with after" }] },
    });
  });

  it("a cursor with skip=0 is fine", async () => {
    expect((await app.request(`/agents?skip=0&after=${validCursor}`)).status).toBe(200);
  });
});

describe("GET /agents/{agent_id}/tasks", () => {
  it("filters, orders, pages and counts an agent's tasks only", async () => {
    const agent = await createAgent(app);
    const other = await createAgent(app);
    await createTask(app, other.id, { metadata: { kind: "a" } });
    const tasks: TaskOut[] = [];
    for (let i = 0; i < 6; i++) {
      tasks.push(await createTask(app, agent.id, { title: `t${i}`, metadata: { kind: i % 2 ? "b" : "a" } }));
    }
    const path = `/agents/${agent.id}/tasks`;
    expect(ids((await get(`${path}?metadata[kind]=a`)).items)).toEqual(ids(tasks.filter((_, i) => i % 2 === 0)));
    const pages = await follow(`${path}?order=desc&limit=4&include_total=true`);
    expect(pages).toEqual([ids([...tasks].reverse().slice(0, 4)), ids([...tasks].reverse().slice(4))]);
    const counted = await get(`${path}?metadata[kind]=b&include_total=true&limit=1`);
    expect(counted.res.headers.get("x-total-count")).toBe("3");
    expect(counted.res.headers.get("link")).toMatch(
      new RegExp(`^<${path}\\?metadata\\[kind\\]=b&include_total=true&limit=1&after=[^>]+>; rel="next"$`),
    );
    await app.request(`${path}/${tasks[0]?.id}`, { method: "PATCH", json: { status: "running" } });
    const runningA = await get(`${path}?status=running&metadata[kind]=a&include_total=true`);
    expect(ids(runningA.items)).toEqual([tasks[0]?.id]);
    const after = await get(`${path}?created_after=${tasks[3]?.created_at}`);
    expect(ids(after.items)).toEqual(ids(tasks.slice(4).filter((t) => t.created_at > (tasks[3]?.created_at ?? ""))));
  });

  it("is 404 for a missing agent before anything else, 400 for bad parameters", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    expect((await app.request(`/agents/${missing}/tasks?order=desc`)).status).toBe(404);
    const agent = await createAgent(app);
    const res = await app.request(`/agents/${agent.id}/tasks?order=sideways`);
    expect(res.status).toBe(400);
    expect((await app.request(`/agents/${agent.id}/tasks?after=nope`)).status).toBe(400);
  });
});

describe("over tRPC", () => {
  it("agents.list gives the items, the next cursor and the total, with every filter", async () => {
    const { group, agents } = await agentGroup(5);
    const first = await client.agents.list.query({ metadata: { group }, limit: 2, include_total: true });
    expect(ids(first.items)).toEqual(ids(agents.slice(0, 2)));
    expect(first.total).toBe(5);
    const second = await client.agents.list.query({ metadata: { group }, limit: 2, after: first.next_cursor ?? "" });
    expect(ids(second.items)).toEqual(ids(agents.slice(2, 4)));
    expect(second.total).toBeNull();
    const third = await client.agents.list.query({ metadata: { group }, limit: 2, after: second.next_cursor ?? "" });
    expect(ids(third.items)).toEqual(ids(agents.slice(4)));
    expect(third.next_cursor).toBeNull();
    const listed = await client.agents.list.query({ metadata: { group, parity: "odd" }, order: "desc" });
    expect(ids(listed.items)).toEqual(ids([agents[3], agents[1]] as AgentOut[]));
  });

  it("tasks.list pages an agent's tasks", async () => {
    const agent = await createAgent(app);
    const tasks = [await createTask(app, agent.id), await createTask(app, agent.id)];
    const page = await client.tasks.list.query({ agent_id: agent.id, limit: 1, order: "desc", include_total: true });
    expect(page).toEqual({ items: [tasks[1]], next_cursor: expect.any(String), total: 2 });
  });

  it("refuses bad list input with BAD_REQUEST and the field", async () => {
    const refused = async (input: Record<string, unknown>) => {
      const error = await client.agents.list.query(input as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TRPCClientError);
      const data = (error as TRPCClientError<AppRouter>).data as {
        code: string;
        details?: { issues: { field: string }[] };
      };
      expect(data.code).toBe("BAD_REQUEST");
      return data.details?.issues.map((issue) => issue.field);
    };
    expect(await refused({ after: "garbage" })).toEqual(["after"]);
    expect(await refused({ order: "sideways" })).toEqual(["order"]);
    expect(await refused({ metadata: { a: 1 } })).toEqual(["metadata.a"]);
    // A __proto__ key cannot be written in an object literal: sent as the JSON a client would send.
    const input = encodeURIComponent('{"metadata":{"__proto__":"x"}}');
    const res = await app.request(`/trpc/agents.list?input=${input}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { data: { details: unknown } } };
    expect(body.error.data.details).toEqual({
      issues: [{ field: "metadata.__proto__", message: "must not be __proto__" }],
    });
  });
});
