import { parseArgs } from "node:util";
import type { Provider } from "./databases.js";

export interface BenchOptions {
  /** Also run everything on PostgreSQL. */
  pg: boolean;
  /** Only PostgreSQL (implies pg). */
  pgOnly: boolean;
  /** Seconds measured per scenario. */
  duration: number;
  /** Seconds of warm-up before each measured scenario. */
  warmup: number;
  connections: number;
  /** Rounds of A/B alternation (A B A B for 2). */
  rounds: number;
  /** Seconds measured per scenario and size in the growth table. */
  growthDuration: number;
  growth: boolean;
  /** Run each scenario once more under `node --cpu-prof` and summarise the profiles. */
  profile: boolean;
  /** Only these scenario keys (all when empty). */
  scenarios: string[];
  /** Agents seeded through the API. */
  agents: number;
  /** `--quick`: a smoke run, smaller where a scenario has a size of its own ((m)). */
  quick: boolean;
}

function positiveNumber(raw: string | undefined, fallback: number, name: string): number {
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      pg: { type: "boolean", default: false },
      "pg-only": { type: "boolean", default: false },
      quick: { type: "boolean", default: false },
      duration: { type: "string" },
      rounds: { type: "string" },
      connections: { type: "string", default: "32" },
      "no-growth": { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      scenarios: { type: "string", default: "" },
    },
  });
  const quick = values.quick === true;
  const duration = positiveNumber(values.duration, quick ? 2 : 10, "duration");
  return {
    pg: values.pg === true || values["pg-only"] === true,
    pgOnly: values["pg-only"] === true,
    duration,
    warmup: quick ? 1 : 2,
    connections: positiveNumber(values.connections, 32, "connections"),
    rounds: positiveNumber(values.rounds, quick ? 1 : 2, "rounds"),
    growthDuration: quick ? 1 : Math.min(duration, 5),
    growth: values["no-growth"] !== true,
    profile: values.profile === true,
    scenarios: values.scenarios.split(",").filter(Boolean),
    agents: 10_000,
    quick,
  };
}

/** What `bench:idempotency` and `bench:rate-limit` take: each compares a setting off and on, round after round. */
export interface CostOptions {
  /** SQLite, then PostgreSQL with `--pg`; `--only sqlite|postgresql` for one of them. */
  providers: Provider[];
  /** Seconds measured per run. */
  duration: number;
  rounds: number;
  connections: number;
}

export function parseCostOptions(argv: string[], defaults: { rounds: number }): CostOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      pg: { type: "boolean", default: false },
      only: { type: "string" },
      duration: { type: "string" },
      rounds: { type: "string" },
      connections: { type: "string" },
    },
  });
  const { only } = values;
  if (only !== undefined && only !== "sqlite" && only !== "postgresql") {
    throw new Error("--only must be sqlite or postgresql");
  }
  return {
    providers: only ? [only] : ["sqlite", ...(values.pg ? (["postgresql"] as const) : [])],
    duration: positiveNumber(values.duration, 5, "duration"),
    rounds: positiveNumber(values.rounds, defaults.rounds, "rounds"),
    connections: positiveNumber(values.connections, 32, "connections"),
  };
}
