import { cpus, totalmem } from "node:os";
import { type LeaseBench, leaseReport } from "./leases.js";
import type { QueryPlan } from "./plans.js";
import type { ProfileSummary } from "./profile.js";
import { type RungRow, rungReport } from "./rungs/bench.js";
import { reportOrder } from "./scenarios.js";
import { type ScheduleBench, scheduleReport } from "./schedules.js";
import type { Summary } from "./stats.js";
import { type WebhookBench, webhookReport } from "./webhooks.js";

export interface ScenarioRow {
  key: string;
  title: string;
  read: boolean;
  service?: Summary;
  baseline?: Summary;
  service2?: Summary;
}

export interface GrowthRow {
  size: number;
  service: Record<string, Summary>;
  baseline: Record<string, Summary>;
}

export interface ProviderReport {
  provider: string;
  rows: ScenarioRow[];
  notes: string[];
  exitCodes: string[];
  growth: GrowthRow[];
  plans: QueryPlan[];
  profiles: ProfileSummary[];
  /** A line per missed target of the rounds: what limits it (bench/lib/limits.ts). */
  limits: string[];
  /** Scenario (h), when it ran. */
  leases?: LeaseBench;
  /** Scenario (j), when it ran. */
  webhooks?: WebhookBench;
  schedules?: ScheduleBench;
  /** The rungs scenario, when it ran. */
  rungs?: RungRow[];
}

const f = (value: number | undefined, digits = 0) => (value === undefined ? "–" : value.toFixed(digits));
const ratio = (a?: Summary, b?: Summary) => (a && b && b.rps > 0 ? (a.rps / b.rps).toFixed(2) : "–");
// Baseline CPU per request over the service's: the efficiency ratio that other work on the machine moves least.
const cpuRatio = (service?: Summary, baseline?: Summary) =>
  service && baseline && service.cpuPerRequest > 0 ? (baseline.cpuPerRequest / service.cpuPerRequest).toFixed(2) : "–";
const lat = (s?: Summary) => (s ? `${f(s.p50)} / ${f(s.p99)}` : "–");

/** Service ÷ baseline req/s each scenario should reach, per database (docs/performance.md, Latest figures). */
const ratioTargets: Record<string, Record<string, number>> = {
  sqlite: { a: 0.4, b: 0.65, c: 0.55, d: 0.4, e: 0.65 },
  postgresql: { a: 0.6, b: 0.8, c: 0.5, e: 0.8 },
};

/** One target of the benchmark (never asserted in tests), checked against this run. */
export interface TargetCheck {
  kind: "errors" | "ratio" | "workers" | "p99" | "growth";
  /** The scenario it is about, if one. */
  scenario?: string;
  /** What it asks, as the report prints it. */
  target: string;
  met: boolean;
  /** What this run reached, as printed; none for a met zero-errors target. */
  value?: string;
}

export function checkTargets(provider: string, rows: ScenarioRow[], growth: GrowthRow[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const row = (key: string) => rows.find((r) => r.key === key);
  const errors = rows.flatMap((r) => [r.service, r.baseline, r.service2]).reduce((n, s) => n + (s?.errors ?? 0), 0);
  checks.push({
    kind: "errors",
    target: "zero errors",
    met: errors === 0,
    value: errors === 0 ? undefined : `${errors} errors`,
  });
  for (const [key, floor] of Object.entries(ratioTargets[provider] ?? {})) {
    const r = row(key);
    if (!r?.service || !r.baseline) continue;
    const value = r.service.rps / r.baseline.rps;
    checks.push({
      kind: "ratio",
      scenario: key,
      target: `(${key}) service/baseline ≥ ${floor}`,
      met: value >= floor,
      value: value.toFixed(2),
    });
  }
  for (const r of rows.filter((r) => r.read && r.service && r.service2)) {
    const value = (r.service2 as Summary).rps / (r.service as Summary).rps;
    checks.push({
      kind: "workers",
      scenario: r.key,
      target: `(${r.key}) 2 workers ≥ 1.7× 1 worker`,
      met: value >= 1.7,
      value: `${value.toFixed(2)}×`,
    });
  }
  for (const key of ["a", "d"]) {
    const s = row(key)?.service;
    if (s)
      checks.push({
        kind: "p99",
        scenario: key,
        target: `(${key}) p99 ≤ 30 ms`,
        met: s.p99 <= 30,
        value: `${s.p99} ms`,
      });
  }
  const largest = growth.at(-1);
  const b = largest?.service.b;
  const e = largest?.service.e;
  if (largest && b && e) {
    const value = e.p50 / Math.max(b.p50, 1);
    checks.push({
      kind: "growth",
      target: `(e) within 2× of (b) at ${largest.size.toLocaleString("en")} agents`,
      met: value <= 2,
      value: `p50 ${e.p50} vs ${b.p50} ms`,
    });
  }
  return checks;
}

const targetLine = (c: TargetCheck) =>
  `- ${c.target}: ${c.met ? "met" : "**missed**"}${c.value === undefined ? "" : ` (${c.value})`}`;

export function machine(): string {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  return `${cpus().length} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}`;
}

export function renderReport(reports: ProviderReport[], header: string[]): string {
  const out = [...header, ""];
  for (const r of reports) {
    const rows = [...r.rows].sort((x, y) => reportOrder.indexOf(x.key) - reportOrder.indexOf(y.key));
    out.push(`## ${r.provider}`, "");
    if (rows.length === 0) {
      // Only scenarios outside the rounds ran ((h), (i), (j), rungs), or only profiles (--profile).
      if (r.notes.length) out.push("Notes:", ...r.notes.map((n) => `- ${n}`), "");
      out.push(
        ...rungReport(r.rungs),
        ...leaseReport(r.leases),
        ...webhookReport(r.webhooks),
        ...scheduleReport(r.schedules),
      );
      for (const p of r.profiles) out.push(...p.lines, "");
      continue;
    }
    out.push(
      "| scenario | service / baseline req/s | service / baseline CPU per request | 2 workers / 1 req/s | service req/s | baseline req/s | 2 workers req/s | p50 / p99 ms service | baseline | 2 workers | errors | server CPU µs/req (service, baseline, 2 workers) | peak RSS MiB (service, baseline, 2 workers) |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const s of rows) {
      const errors = [s.service, s.baseline, s.service2].map((x) => (x ? String(x.errors) : "–")).join(" / ");
      const rss = [s.service, s.baseline, s.service2].map((x) => f(x?.rssMiB)).join(" / ");
      const cpu = [s.service, s.baseline, s.service2].map((x) => f(x?.cpuPerRequest)).join(" / ");
      out.push(
        `| (${s.key}) ${s.title} | ${ratio(s.service, s.baseline)} | ${cpuRatio(s.service, s.baseline)} | ${ratio(s.service2, s.service)} | ${f(s.service?.rps)} | ${f(s.baseline?.rps)} | ${f(s.service2?.rps)} | ${lat(s.service)} | ${lat(s.baseline)} | ${lat(s.service2)} | ${errors} | ${cpu} | ${rss} |`,
      );
    }
    out.push("", "Targets:", ...checkTargets(r.provider, rows, r.growth).map(targetLine), "");
    if (r.limits.length) out.push("What limits the missed targets:", ...r.limits, "");
    if (r.notes.length) out.push("Notes:", ...r.notes.map((n) => `- ${n}`), "");
    out.push(`Exit codes after SIGTERM: ${r.exitCodes.join(", ")}`, "");
    out.push(
      ...rungReport(r.rungs),
      ...leaseReport(r.leases),
      ...webhookReport(r.webhooks),
      ...scheduleReport(r.schedules),
    );
    if (r.growth.length) {
      out.push(
        "### Growth (1 worker; p50 / p99 ms at 32 connections, service/baseline throughput ratio)",
        "",
        "| agents | (a) GET one | (b) list 100 | (e) skip 9000 | (e)/(b) p50 | ratio (a) | ratio (b) | ratio (e) |",
        "|---|---|---|---|---|---|---|---|",
      );
      for (const g of r.growth) {
        const { a, b, e } = g.service;
        out.push(
          `| ${g.size.toLocaleString("en")} | ${lat(a)} | ${lat(b)} | ${lat(e)} | ${e && b ? (e.p50 / Math.max(b.p50, 1)).toFixed(2) : "–"} | ${ratio(a, g.baseline.a)} | ${ratio(b, g.baseline.b)} | ${ratio(e, g.baseline.e)} |`,
        );
      }
      out.push("");
    }
    if (r.plans.length) {
      out.push("### Query plans of the list queries (the SQL Prisma sends)", "");
      for (const p of r.plans) out.push(`${p.request}`, "", "```sql", p.sql, "```", "```", p.plan, "```", "");
    }
    for (const p of r.profiles) out.push(...p.lines, "");
  }
  return out.join("\n");
}
