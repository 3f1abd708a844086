// Seeding through the HTTP API, and discovery of the endpoints that other
// parts of the project add (PATCH, the data groups): a scenario that needs an
// absent endpoint is skipped with a note, so the bench runs at every stage.

const json = { "content-type": "application/json" };
const types = ["assistant", "worker", "supervisor"];

export async function pool<T>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Creates `count` agents with POST /agents; returns their ids in creation order. */
export async function seedAgents(url: string, count: number): Promise<string[]> {
  const ids: string[] = new Array(count);
  await pool([...Array(count).keys()], 16, async (i) => {
    const res = await fetch(`${url}/agents`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ name: `agent-${i}`, type: types[i % 3] }),
    });
    if (res.status !== 201) throw new Error(`seeding: POST /agents answered ${res.status}`);
    ids[i] = ((await res.json()) as { id: string }).id;
  });
  return ids;
}

/**
 * Moves the given agents to `running` through PATCH. Returns false, changing
 * nothing, when the service has no PATCH /agents/{id} yet (405).
 */
export async function markRunning(url: string, ids: string[]): Promise<boolean> {
  const patch = (id: string) =>
    fetch(`${url}/agents/${id}`, { method: "PATCH", headers: json, body: JSON.stringify({ status: "running" }) });
  const [first, ...rest] = ids;
  if (!first) return false;
  const probe = await patch(first);
  if (probe.status === 405 || probe.status === 404) return false;
  if (probe.status !== 200) throw new Error(`seeding: PATCH /agents/{id} answered ${probe.status}`);
  await pool(rest, 16, async (id) => {
    const res = await patch(id);
    if (res.status !== 200) throw new Error(`seeding: PATCH /agents/{id} answered ${res.status}`);
    await res.arrayBuffer();
  });
  return true;
}

export interface DataGroupPaths {
  cars?: string[];
  coe?: string[];
}

/** Paths for scenario (g) when the versioned data groups are served: every page of /v2/cars, every month of /v1/coe. */
export async function dataGroupPaths(url: string): Promise<DataGroupPaths> {
  const found: DataGroupPaths = {};
  const cars = await fetch(`${url}/v2/cars?limit=10`);
  if (cars.status === 200) {
    const body = (await cars.json()) as { meta?: { total?: number } };
    const pages = Math.max(1, Math.ceil((body.meta?.total ?? 0) / 10));
    found.cars = Array.from({ length: pages }, (_, i) => `/v2/cars?page=${i + 1}`);
  } else await cars.arrayBuffer();
  const coe = await fetch(`${url}/v1/coe`);
  if (coe.status === 200) {
    const body = (await coe.json()) as { data?: { month?: string }[] };
    const months = [...new Set((body.data ?? []).map((row) => row.month).filter(Boolean))];
    if (months.length) found.coe = months.map((month) => `/v1/coe?month=${month}`);
  } else await coe.arrayBuffer();
  return found;
}
