import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statement } from "../src/db/index.js";
import { sqliteTimestamp } from "../src/db/values.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { testProvider } from "./helpers/databases.js";

// docs/http.md: paging by cursor over 10,000 agents while others are created
// returns every agent that existed before exactly once.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const seeded = 10_000;

// Rows as JSON [id, created_at], in batches: seeding through POST would take minutes on a loaded machine.
const insertAgents = statement<unknown, [rows: string]>("test_paging_insert_agents", {
  sqlite: `INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at, version, metadata)
    SELECT json_extract(value, '$[0]'), '00000000-0000-4000-8000-000000000000', 'seeded', 'worker', 'idle', json_extract(value, '$[1]'),
      json_extract(value, '$[1]'), 1, '{}' FROM json_each($1)`,
  postgresql: `INSERT INTO agents (id, project_id, name, type, status, created_at, updated_at, version, metadata)
    SELECT x->>0, '00000000-0000-4000-8000-000000000000', 'seeded', 'worker', 'idle', (x->>1)::timestamp, (x->>1)::timestamp, 1, '{}'
    FROM jsonb_array_elements($1::jsonb) x`,
});

/** 10,000 agents in the past, seven to a millisecond, so the id decides between equal times. */
async function seed(): Promise<Set<string>> {
  const start = Date.now() - 3_600_000;
  const ids = new Set<string>();
  for (let batch = 0; batch < seeded / 1000; batch++) {
    const rows = Array.from({ length: 1000 }, (_, i) => {
      const id = randomUUID();
      ids.add(id);
      const at = new Date(start + Math.floor((batch * 1000 + i) / 7));
      return [id, testProvider === "sqlite" ? sqliteTimestamp(at) : at.toISOString()];
    });
    await app.database.db.run(insertAgents, [JSON.stringify(rows)]);
  }
  return ids;
}

/** Creates agents through the API until `stop` is aborted; resolves with their ids. */
async function keepCreating(stop: AbortSignal): Promise<string[]> {
  const created: string[] = [];
  while (!stop.aborted) {
    const res = await app.request("/agents", { method: "POST", json: { name: "newcomer", type: "worker" } });
    expect(res.status).toBe(201);
    created.push(((await res.json()) as { id: string }).id);
  }
  return created;
}

/** Every page from `path` by Link rel="next"; the ids in the order met. */
async function pageThrough(path: string): Promise<{ seen: string[]; pages: number }> {
  const seen: string[] = [];
  let pages = 0;
  let next: string | null = path;
  while (next) {
    const res = await app.request(next);
    expect(res.status).toBe(200);
    pages++;
    seen.push(...((await res.json()) as { id: string }[]).map((agent) => agent.id));
    next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get("link") ?? "")?.[1] ?? null;
  }
  return { seen, pages };
}

describe("paging 10,000 agents by cursor while agents are created", () => {
  let existing: Set<string>;
  beforeAll(async () => {
    existing = await seed();
  }, 120_000);

  it("X-Total-Count is exact", async () => {
    const res = await app.request("/agents?limit=1&include_total=true");
    expect(res.headers.get("x-total-count")).toBe(String(seeded));
  });

  it.each(["asc", "desc"])(
    "order=%s returns every pre-existing agent exactly once",
    async (order) => {
      const before = existing.size;
      const stop = new AbortController();
      const creating = keepCreating(stop.signal);
      const { seen, pages } = await pageThrough(`/agents?order=${order}&limit=100`);
      stop.abort();
      const created = await creating;
      expect(created.length).toBeGreaterThan(0);
      expect(new Set(seen).size).toBe(seen.length);
      const preexisting = seen.filter((id) => existing.has(id));
      expect(preexisting.length).toBe(before);
      expect(pages).toBeGreaterThanOrEqual(seeded / 100);
      // Nothing but what existed (the seeded agents, and those of the run before) or was created meanwhile.
      const known = new Set([...existing, ...created]);
      expect(seen.filter((id) => !known.has(id))).toEqual([]);
      for (const id of created) existing.add(id);
    },
    180_000,
  );
});
