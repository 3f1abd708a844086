// The bench report's targets and what it says limits a missed one: the
// figures must be this run's own, named as docs/performance.md reads them.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { workersLine } from "../bench/lib/limits.js";
import { profileLine, profileShares } from "../bench/lib/profile.js";
import { checkTargets, renderReport, type ScenarioRow, type TargetCheck } from "../bench/lib/report.js";
import type { Summary } from "../bench/lib/stats.js";

const summary = (figures: Partial<Summary>): Summary => ({
  rps: 1000,
  p50: 5,
  p99: 10,
  errors: 0,
  rssMiB: 100,
  cpuPerRequest: 100,
  serverCores: 1,
  loadCores: 0.5,
  machineBusy: 0.75,
  runs: 2,
  ...figures,
});

describe("the bench's targets", () => {
  it("say which are missed, for which scenario, with this run's value", () => {
    const rows: ScenarioRow[] = [
      {
        key: "a",
        title: "GET /agents/{id}",
        read: true,
        service: summary({ rps: 3100, p99: 31 }),
        baseline: summary({ rps: 8000 }),
        service2: summary({ rps: 4650 }),
      },
      {
        key: "b",
        title: "GET /agents?limit=100",
        read: true,
        service: summary({ rps: 700, errors: 2 }),
        baseline: summary({ rps: 1000 }),
      },
    ];
    expect(checkTargets("sqlite", rows, [])).toEqual([
      { kind: "errors", target: "zero errors", met: false, value: "2 errors" },
      { kind: "ratio", scenario: "a", target: "(a) service/baseline ≥ 0.4", met: false, value: "0.39" },
      { kind: "ratio", scenario: "b", target: "(b) service/baseline ≥ 0.65", met: true, value: "0.70" },
      { kind: "workers", scenario: "a", target: "(a) 2 workers ≥ 1.7× 1 worker", met: false, value: "1.50×" },
      { kind: "p99", scenario: "a", target: "(a) p99 ≤ 30 ms", met: false, value: "31 ms" },
    ]);
  });
});

describe("what limits a missed target", () => {
  const dir = mkdtempSync(join(tmpdir(), "bench-limits-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("for 2 workers: how busy the machine's cores were, and who used them", () => {
    const row: ScenarioRow = {
      key: "a",
      title: "GET /agents/{id}",
      read: true,
      service: summary({ machineBusy: 0.76, serverCores: 1.02, loadCores: 0.36 }),
      service2: summary({ machineBusy: 0.92, serverCores: 1.43, loadCores: 0.51 }),
    };
    const check = checkTargets("sqlite", [row], []).find((c) => c.kind === "workers") as TargetCheck;
    expect(check.met).toBe(false);
    expect(workersLine(check, row, 2)).toBe(
      "- (a) 2 workers ≥ 1.7× 1 worker: the 2 cores were 92% busy during the 2-worker runs: the machine's CPU was the limit (service 1.43 cores, load generator 0.51, the rest 0.00); with 1 worker 76% (service 1.02 cores, load generator 0.36, the rest 0.14)",
    );
    const idle = { ...row, service2: summary({ machineBusy: 0.6, serverCores: 0.9, loadCores: 0.3 }) };
    expect(workersLine(check, idle, 2)).toBe(
      "- (a) 2 workers ≥ 1.7× 1 worker: the 2 cores were 60% busy during the 2-worker runs (service 0.90 cores, load generator 0.30, the rest 0.00); with 1 worker 76% (service 1.02 cores, load generator 0.36, the rest 0.14)",
    );
  });

  it("for a ratio or a p99: the profile's largest groups and functions, by share of the busy time", () => {
    const frame = (functionName: string, url: string, lineNumber: number) => ({ functionName, url, lineNumber });
    const nodes = [
      { id: 1, callFrame: frame("(root)", "", -1), hitCount: 0 },
      { id: 2, callFrame: frame("(idle)", "", -1), hitCount: 50 },
      { id: 3, callFrame: frame("(garbage collector)", "", -1), hitCount: 10 },
      { id: 4, callFrame: frame("get", "file:///srv/dist/src/db/a.js", 4), hitCount: 30 },
      { id: 5, callFrame: frame("parse", "file:///srv/node_modules/zod/v4/core/x.js", 7), hitCount: 20 },
      { id: 6, callFrame: frame("read", "node:internal/x", 2), hitCount: 40 },
    ];
    const file = join(dir, "one.cpuprofile");
    // 150 samples over 150 ms: 1 ms each.
    writeFileSync(file, JSON.stringify({ nodes, startTime: 0, endTime: 150_000, samples: Array(150).fill(1) }));
    const shares = profileShares(file);
    expect(shares.busyMs).toBe(100);
    expect(profileLine(shares)).toBe(
      "by group: node internals 40.0%, app 30.0%, zod 20.0%, (garbage collector) 10.0%; largest functions: `read node:internal/x:3` 40.0%, `get src/db/a.js:5` 30.0%, `parse zod/v4/core/x.js:8` 20.0%",
    );
  });
});

describe("a profiling run's report (--profile)", () => {
  it("holds each profile's summary, though no rounds ran", () => {
    const report = renderReport(
      [
        {
          provider: "sqlite",
          rows: [],
          notes: [],
          exitCodes: [],
          growth: [],
          plans: [],
          profiles: [
            { scenario: "(a) GET /agents/{id}", lines: ["#### Profile of (a) GET /agents/{id}", "| app | 30.0% |"] },
          ],
          limits: [],
        },
      ],
      ["# Benchmark results"],
    );
    expect(report).toBe("# Benchmark results\n\n## sqlite\n\n#### Profile of (a) GET /agents/{id}\n| app | 30.0% |\n");
  });
});
