/** Every agent the service lists, page by page, as id → name. */
export async function listAgents(url: string): Promise<Map<string, string>> {
  const agents = new Map<string, string>();
  for (let skip = 0; ; skip += 1000) {
    const response = await fetch(`${url}/agents?limit=1000&skip=${skip}`);
    if (response.status !== 200) throw new Error(`GET /agents answered ${response.status}`);
    const page = (await response.json()) as { id: string; name: string }[];
    for (const agent of page) agents.set(agent.id, agent.name);
    if (page.length < 1000) return agents;
  }
}

/** Creates agents over HTTP, a few at a time; returns their ids. */
export async function createAgents(url: string, count: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      const response = await fetch(`${url}/agents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: `${prefix}-${n}`, type: "worker" }),
      });
      if (response.status !== 201) throw new Error(`POST /agents answered ${response.status}`);
      ids.push(((await response.json()) as { id: string }).id);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return ids;
}
