import { access } from "node:fs/promises";
import type { Database } from "../../../db/index.js";
import type { Logger } from "../../../logger.js";
import { csvTables } from "./csv-tables.js";
import { importDirectory, rowCount, sampleDataDir } from "./importer.js";

/**
 * Gives each empty data table its sample file at start, so a new user sees
 * real figures at once; a table that holds data is never touched. Several
 * instances starting together are safe: the import is an idempotent upsert.
 */
export async function seedSampleData(db: Database, logger: Logger): Promise<void> {
  const empty = [];
  for (const table of csvTables) if ((await rowCount(db, table.table)) === 0) empty.push(table);
  if (empty.length === 0) return;
  if (
    !(await access(sampleDataDir).then(
      () => true,
      () => false,
    ))
  ) {
    logger.warn({ dir: sampleDataDir }, "sample data not found; the data groups start empty");
    return;
  }
  const started = performance.now();
  const files = await importDirectory(db, sampleDataDir, { only: empty });
  logger.info({ files, duration_ms: Math.round(performance.now() - started) }, "sample data imported");
}
