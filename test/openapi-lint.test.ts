import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openApiDocument } from "../src/app.js";
import { loadConfig } from "../src/config.js";

// The document as generators and linters see it: Spectral's default OpenAPI
// rules (spectral:oas) find no error under any AUTH_POLICY, and no schema is
// named after a JavaScript or DOM global, which a generated client would shadow.
const root = new URL("..", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const documentOf = (env: Record<string, string>) => openApiDocument(loadConfig({ SEED_SAMPLE_DATA: "false", ...env }));

describe("the document", () => {
  it.each(["open", "writes", "all"])(
    "under AUTH_POLICY=%s passes Spectral's spectral:oas rules with no error",
    (policy) => {
      const file = join(dir, `openapi-${policy}.json`);
      writeFileSync(file, JSON.stringify(documentOf({ AUTH_POLICY: policy, RATE_LIMIT_PER_MINUTE: "60" })));
      const run = spawnSync(
        join(root, "node_modules", ".bin", "spectral"),
        ["lint", file, "--ruleset", join(root, ".spectral.yaml"), "--format", "json", "--quiet"],
        { encoding: "utf8" },
      );
      const findings = JSON.parse(run.stdout || "[]") as { severity: number; code: string; path: string[] }[];
      const errors = findings.filter((finding) => finding.severity === 0);
      expect(errors.map((error) => `${error.code} ${error.path.join(".")}`)).toEqual([]);
    },
  );

  it("names no schema after a JavaScript or DOM global", () => {
    const names = Object.keys(documentOf({}).components?.schemas ?? {});
    const globals = ["Event", "Error", "Response", "Request", "Object", "Array", "Date", "Map", "Set", "Promise"];
    expect(names.filter((name) => globals.includes(name))).toEqual([]);
    expect(names).toContain("ChangeEvent");
  });
});
