// Summarises a `node --cpu-prof` profile: self time grouped by the package
// the code belongs to, and the functions that cost the most.
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
}

export interface ProfileSummary {
  scenario: string;
  lines: string[];
}

const families: Record<string, string[]> = {
  express: [
    "express",
    "router",
    "body-parser",
    "raw-body",
    "finalhandler",
    "on-finished",
    "qs",
    "type-is",
    "content-type",
    "iconv-lite",
    "mime-types",
    "accepts",
    "vary",
    "statuses",
    "http-errors",
    "parseurl",
    "path-to-regexp",
    "encodeurl",
    "escape-html",
    "media-typer",
    "negotiator",
    "depd",
    "fresh",
    "etag",
    "proxy-addr",
    "bytes",
    "debug",
    "send",
    "serve-static",
    "is-promise",
    "side-channel",
    "call-bound",
    "get-intrinsic",
  ],
  "trpc-to-openapi": ["trpc-to-openapi", "co-body", "inflation"],
  trpc: ["@trpc/server"],
  zod: ["zod"],
  prisma: [
    "@prisma/client",
    "@prisma/adapter-better-sqlite3",
    "@prisma/adapter-pg",
    "@prisma/driver-adapter-utils",
    "@prisma/client-runtime-utils",
  ],
  "driver (better-sqlite3, pg)": ["better-sqlite3", "pg", "pg-protocol", "pg-pool", "pg-types", "bindings"],
  pino: [
    "pino",
    "sonic-boom",
    "thread-stream",
    "quick-format-unescaped",
    "fast-redact",
    "safe-stable-stringify",
    "atomic-sleep",
    "on-exit-leak-free",
    "pino-std-serializers",
  ],
};
const familyOf = new Map(Object.entries(families).flatMap(([family, packages]) => packages.map((p) => [p, family])));

function groupOf({ url, functionName }: ProfileNode["callFrame"]): string {
  if (!url) return functionName.startsWith("(") ? functionName : "native";
  if (url.startsWith("node:")) return "node internals";
  const pkg = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return familyOf.get(pkg) ?? pkg.replace(/^@prisma\/.*/, "prisma");
  if (url.includes("/src/generated/")) return "prisma";
  if (url.includes("/dist/src/") || url.includes("/src/")) return "app";
  return "other";
}

const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;

/** Where a profile's busy time went: by group and by function, largest first, in ms of self time. */
export interface ProfileShares {
  busyMs: number;
  groups: [group: string, ms: number][];
  functions: [name: string, { group: string; ms: number }][];
}

export function profileShares(file: string): ProfileShares {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const interval = (profile.endTime - profile.startTime) / 1000 / Math.max(profile.samples.length, 1);
  const groups = new Map<string, number>();
  const functions = new Map<string, { group: string; ms: number }>();
  let busyMs = 0;
  for (const node of profile.nodes) {
    const ms = (node.hitCount ?? 0) * interval;
    if (ms === 0 || node.callFrame.functionName === "(idle)") continue;
    const group = groupOf(node.callFrame);
    busyMs += ms;
    groups.set(group, (groups.get(group) ?? 0) + ms);
    const where = node.callFrame.url.replace(/.*node_modules\//, "").replace(/.*\/(dist\/)?src\//, "src/");
    const name =
      `${node.callFrame.functionName || "(anonymous)"} ${where ? `${where}:${node.callFrame.lineNumber + 1}` : ""}`.trim();
    const entry = functions.get(name) ?? { group, ms: 0 };
    entry.ms += ms;
    functions.set(name, entry);
  }
  return {
    busyMs,
    groups: [...groups].sort((a, b) => b[1] - a[1]),
    functions: [...functions].sort((a, b) => b[1].ms - a[1].ms),
  };
}

/** The largest groups and functions of a profile, each with its share of the busy time, on one line. */
export function profileLine({ busyMs, groups, functions }: ProfileShares): string {
  const top = (items: [string, number][], n: number) =>
    items.slice(0, n).map(([name, ms]) => `${name} ${pct(ms, busyMs)}`);
  const largest = functions.map(([name, { ms }]): [string, number] => [`\`${name}\``, ms]);
  return `by group: ${top(groups, 6).join(", ")}; largest functions: ${top(largest, 3).join(", ")}`;
}

export function summariseProfile(file: string, scenario: string, requests: number): ProfileSummary {
  const { busyMs: busy, groups, functions } = profileShares(file);
  const perRequest =
    requests > 0 ? ` (${((busy * 1000) / requests).toFixed(0)} µs sampled per request, wall time while busy)` : "";
  const lines = [
    `#### Profile of ${scenario}: busy ${busy.toFixed(0)} ms for ${requests} requests${perRequest}`,
    "",
    "| group | self time |",
    "|---|---|",
    ...groups.map(([group, ms]) => `| ${group} | ${pct(ms, busy)} |`),
    "",
    "| top functions (self) | group | self time |",
    "|---|---|---|",
    ...functions.slice(0, 12).map(([name, { group, ms }]) => `| \`${name}\` | ${group} | ${pct(ms, busy)} |`),
  ];
  return { scenario, lines };
}
