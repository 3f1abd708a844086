// The fuzzer's findings, for a person: grouped counts on the console, and
// every finding with its request in a file (replay with the same CHAOS_SEED).
import type { FuzzRequest } from "./request.js";

export interface Finding {
  /** Which generated request (0-based) of the run with this seed. */
  index: number;
  kind: string;
  problem: string;
  request: FuzzRequest;
  target: string;
  status: number;
  body: string;
}

/** Findings grouped by kind and problem (ids and numbers folded), most frequent first. */
export function summary(findings: Finding[], top = 40): string {
  const grouped = new Map<string, number>();
  for (const { kind, problem } of findings) {
    const key = `${kind}: ${problem.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "<id>").replace(/\d+/g, "N")}`;
    grouped.set(key, (grouped.get(key) ?? 0) + 1);
  }
  return [...grouped.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, count]) => `  ${String(count).padStart(5)} × ${key.slice(0, 220)}`)
    .join("\n");
}

const excerpt = (request: FuzzRequest) => {
  const body = request.body;
  if (!body) return "";
  if (body.kind === "json") return JSON.stringify(body.value)?.slice(0, 300) ?? "";
  if (body.kind === "text") return JSON.stringify(body.text.slice(0, 300));
  if (body.kind === "bytes") return `bytes ${body.bytes.toString("hex").slice(0, 120)}`;
  return "(over 1 MiB)";
};

export function findingsReport(seed: number, count: number, findings: Finding[]): string {
  const lines = [`seed ${seed}, ${count} requests, ${findings.length} findings`, "", summary(findings, 1000), ""];
  for (const f of findings) {
    lines.push(
      `#${f.index} [${f.kind}] ${f.problem}`,
      `  ${f.request.raw !== undefined ? JSON.stringify(f.request.raw.slice(0, 200)) : `${f.request.method} ${f.target.slice(0, 300)}`}`,
      `  headers ${JSON.stringify(f.request.headers)} body ${excerpt(f.request)}`,
      `  → ${f.status} ${f.body}`,
      "",
    );
  }
  return lines.join("\n");
}
