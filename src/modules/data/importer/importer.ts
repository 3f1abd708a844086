import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { CsvError, parse } from "csv-parse";
import type { Database } from "../../../db/index.js";
import { Prisma } from "../../../generated/sqlite/client.js";
import { projectRoot } from "../../../project-root.js";
import { cleanRow, columnIndexes, ImportError, parserError, startLine } from "./csv-rows.js";
import { type CsvTable, csvTables } from "./csv-tables.js";

export { ImportError };

/** The copy of the published files that ships with the project (data/sample/sg/README.md). */
export const sampleDataDir = join(projectRoot, "data", "sample", "sg");

export interface FileProgress {
  file: string;
  bytes: number;
  totalBytes: number;
  rows: number;
  /** True once, when the file is completely read. */
  done: boolean;
}

export interface FileSummary {
  file: string;
  table: string;
  rows: number;
  /** Rows the table did not have before: 0 when the same file is imported again. */
  added: number;
}

// 500 rows × 7 columns stays far below both databases' limit on bound parameters.
const BATCH_ROWS = 500;
// The whole sample imports in seconds; a much larger file still fits.
const TRANSACTION_TIMEOUT_MS = 10 * 60_000;

const quote = (name: string) => `"${name}"`;

export async function rowCount(db: Database, table: string): Promise<number> {
  const [row] = await db.prisma.$queryRawUnsafe<{ n: bigint | number }[]>(`SELECT COUNT(*) AS n FROM ${quote(table)}`);
  return Number(row?.n ?? 0);
}

/**
 * One multi-row INSERT … ON CONFLICT DO UPDATE: same SQL on SQLite and
 * PostgreSQL. A row whose values are unchanged is not rewritten, so importing
 * the same file again writes nothing.
 */
function upsert(tx: Prisma.TransactionClient, table: CsvTable, rows: Map<string, (string | number)[]>) {
  const names = Object.keys(table.columns);
  const updates = names.filter((name) => !table.key.includes(name));
  return tx.$executeRaw`INSERT INTO ${Prisma.raw(quote(table.table))} (${Prisma.raw(names.map(quote).join(", "))})
    VALUES ${Prisma.join([...rows.values()].map((values) => Prisma.sql`(${Prisma.join(values)})`))}
    ON CONFLICT (${Prisma.raw(table.key.map(quote).join(", "))})
    DO UPDATE SET ${Prisma.raw(updates.map((name) => `${quote(name)} = excluded.${quote(name)}`).join(", "))}
    WHERE ${Prisma.raw(updates.map((name) => `${quote(table.table)}.${quote(name)} <> excluded.${quote(name)}`).join(" OR "))}`;
}

/**
 * Streams one CSV file into its table inside one transaction: every row is
 * cleaned and upserted by its natural key, and the first bad row rolls the
 * whole file back.
 */
export async function importCsvFile(
  db: Database,
  path: string,
  table: CsvTable,
  onProgress: (progress: FileProgress) => void = () => {},
): Promise<FileSummary> {
  const file = basename(path);
  const keyPositions = table.key.map((name) => Object.keys(table.columns).indexOf(name));
  const totalBytes = (await stat(path)).size;
  const before = await rowCount(db, table.table);
  const rows = await db.prisma.$transaction(
    async (tx) => {
      const input = createReadStream(path);
      const parser = parse({ info: true, bom: true, trim: true, relax_column_count: true, skip_empty_lines: true });
      input.on("error", (error) => parser.destroy(error));
      let bytes = 0;
      input.on("data", (chunk) => {
        bytes += chunk.length;
      });
      input.pipe(parser);

      let indexes: Map<string, number> | undefined;
      let batch = new Map<string, (string | number)[]>();
      let rows = 0;
      let lastLine = 0;
      try {
        for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
          const line = startLine(info.lines, record);
          lastLine = info.lines;
          if (!indexes) {
            indexes = columnIndexes(path, record, table);
            continue;
          }
          const values = cleanRow(path, line, record, indexes, table);
          // The same key twice in one file: the later row wins, as a second import would.
          batch.set(keyPositions.map((position) => values[position]).join("\u0000"), values);
          rows++;
          if (batch.size >= BATCH_ROWS) {
            await upsert(tx, table, batch);
            batch = new Map();
            onProgress({ file, bytes, totalBytes, rows, done: false });
          }
        }
      } catch (error) {
        if (error instanceof CsvError) throw parserError(path, lastLine + 1, error, indexes);
        throw error;
      } finally {
        input.destroy();
      }
      if (!indexes) throw new ImportError(path, 1, undefined, "the file is empty (no header line)");
      if (batch.size > 0) await upsert(tx, table, batch);
      onProgress({ file, bytes: totalBytes, totalBytes, rows, done: true });
      return rows;
    },
    { maxWait: 10_000, timeout: TRANSACTION_TIMEOUT_MS },
  );
  return { file, table: table.table, rows, added: (await rowCount(db, table.table)) - before };
}

export interface ImportOptions {
  /** Called while a file is read, for a progress bar. */
  onProgress?: (progress: FileProgress) => void;
  /** Called when a file is committed: a later file's failure does not undo it. */
  onFile?: (summary: FileSummary) => void;
  /** Only these tables' files (default: all three). */
  only?: readonly CsvTable[];
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Imports every known file (cars.csv, coe.csv, pqp.csv) found in `dir`, each in its own transaction. */
export async function importDirectory(
  db: Database,
  dir: string,
  { onProgress, onFile, only = csvTables }: ImportOptions = {},
): Promise<FileSummary[]> {
  const present = [];
  for (const table of only) {
    const path = join(dir, table.file);
    if (await exists(path)) present.push({ path, table });
  }
  if (present.length === 0) throw new Error(`${dir} has none of ${only.map((t) => t.file).join(", ")}`);
  const summaries: FileSummary[] = [];
  for (const { path, table } of present) {
    const summary = await importCsvFile(db, path, table, onProgress);
    onFile?.(summary);
    summaries.push(summary);
  }
  return summaries;
}
