import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestApp } from "./app.js";

/** GET a path and parse the body (undefined when there is none). */
export async function get(app: TestApp, path: string, headers: Record<string, string> = {}) {
  const res = await app.request(path, { headers });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are asserted field by field.
  const body: any = text ? JSON.parse(text) : undefined;
  return { res, body, text };
}

/** A folder holding the given CSV files, for importer tests. */
export function csvDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "agents-csv-"));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}
