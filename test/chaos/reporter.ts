import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Reporter, TestModule } from "vitest/node";
import type { Figure } from "./harness/figures.js";
import { seed } from "./harness/seed.js";
import { logDir } from "./harness/service.js";

/** Prints every figure of the run as one Markdown table (also written to figures.md in the log folder). */
export default class FiguresReporter implements Reporter {
  private readonly started = Date.now();

  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const rows: Figure[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) rows.push(...(test.meta().chaosFigures ?? []));
    }
    if (rows.length === 0) return;
    // Files run in whatever order the runner picks: the table goes by scenario, then database.
    const databases = ["sqlite", "postgresql"];
    rows.sort(
      (a, b) =>
        Number.parseInt(a.scenario, 10) - Number.parseInt(b.scenario, 10) ||
        databases.indexOf(a.database) - databases.indexOf(b.database),
    );
    const header = ["scenario", "database", "figure", "value", "bound", "result"];
    const cells = rows.map((r) => [
      r.scenario,
      r.database,
      r.figure,
      r.value,
      r.bound,
      r.pass === null ? "–" : r.pass ? "pass" : "FAIL",
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)));
    const line = (c: string[]) => `| ${c.map((text, i) => text.padEnd(widths[i] as number)).join(" | ")} |`;
    const rule = line(widths.map((w) => "-".repeat(w)));
    const table = [line(header), rule, ...cells.map(line)].join("\n");
    const minutes = ((Date.now() - this.started) / 60_000).toFixed(1);
    const failed = cells.filter((c) => c[5] === "FAIL");
    // The missed bounds again under the table, where a log cut to its last lines still shows them.
    const missed = failed.length > 0 ? `Missed:\n\n${[line(header), rule, ...failed.map(line)].join("\n")}\n\n` : "";
    const summary = `${missed}${rows.length} figures, ${failed.length} bound(s) missed, ${minutes} min; seed ${seed} (CHAOS_SEED); service logs in ${logDir}`;
    mkdirSync(logDir, { recursive: true });
    writeFileSync(join(logDir, "figures.md"), `${table}\n\n${summary}\n`);
    process.stdout.write(`\nChaos figures\n\n${table}\n\n${summary}\n`);
  }
}
