import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Creates `folder` and any missing parent, one level at a time. Node's own
 * `mkdirSync(…, { recursive: true })` never returns under /proc (it loops on
 * procfs's ENOENT at full CPU), where a folder cannot be made at all: here
 * that is the error of the first level that cannot be made.
 */
export function makeFolder(folder: string): void {
  const missing: string[] = [];
  for (let level = folder; !existsSync(level); level = dirname(level)) {
    missing.unshift(level);
    if (dirname(level) === level) break;
  }
  for (const level of missing) mkdirSync(level);
}
