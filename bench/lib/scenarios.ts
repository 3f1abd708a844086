/** What the load generator sends; `ids` and data-group parameters are filled in per run. */
export type Workload =
  | { kind: "get-one"; apiKey?: true }
  | { kind: "path"; path: string }
  | { kind: "create"; apiKey?: true }
  | { kind: "mix" }
  | { kind: "paths"; paths: string[] };

export interface Scenario {
  key: string;
  title: string;
  workload: Workload;
  /** Served by the baseline too (the data groups are not). */
  baseline: boolean;
  read: boolean;
}

export const agentScenarios = (status: string): Scenario[] => [
  { key: "a", title: "GET /agents/{id}", workload: { kind: "get-one" }, baseline: true, read: true },
  // (a) and (c) again with a project's API key (X-API-Key): what judging a key costs beside an anonymous request.
  {
    key: "a-key",
    title: "GET /agents/{id} with an API key",
    workload: { kind: "get-one", apiKey: true },
    baseline: false,
    read: true,
  },
  {
    key: "b",
    title: "GET /agents?limit=100",
    workload: { kind: "path", path: "/agents?limit=100" },
    baseline: true,
    read: true,
  },
  {
    key: "d",
    title: `GET /agents?status=${status}&limit=10`,
    workload: { kind: "path", path: `/agents?status=${status}&limit=10` },
    baseline: true,
    read: true,
  },
  {
    key: "e",
    title: "GET /agents?skip=9000&limit=100",
    workload: { kind: "path", path: "/agents?skip=9000&limit=100" },
    baseline: true,
    read: true,
  },
  // Writes last, so every read scenario sees exactly the seeded data.
  { key: "c", title: "POST /agents", workload: { kind: "create" }, baseline: true, read: false },
  {
    key: "c-key",
    title: "POST /agents with an API key",
    workload: { kind: "create", apiKey: true },
    baseline: false,
    read: false,
  },
  { key: "f", title: "80% reads / 20% writes", workload: { kind: "mix" }, baseline: true, read: false },
];

export const reportOrder = ["a", "a-key", "b", "c", "c-key", "d", "e", "f", "g1", "g2"];
