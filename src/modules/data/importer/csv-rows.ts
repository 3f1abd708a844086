import type { CsvError } from "csv-parse";
import { CellError } from "./cleaning.js";
import type { CsvTable } from "./csv-tables.js";

/** A bad file: names the file, the line where the record starts and the column. */
export class ImportError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: { index: number; name: string } | undefined,
    readonly reason: string,
  ) {
    const where = column ? `line ${line}, column ${column.index} (${column.name})` : `line ${line}`;
    super(`${file}, ${where}: ${reason}; nothing from this file was imported`);
    this.name = "ImportError";
  }
}

/** Positions of the table's columns in the file (any order, extra columns ignored), from its header. */
export function columnIndexes(file: string, header: string[], table: CsvTable): Map<string, number> {
  const names = header.map((name) => name.toLowerCase());
  const indexes = new Map<string, number>();
  for (const name of Object.keys(table.columns)) {
    const index = names.indexOf(name);
    if (index === -1) throw new ImportError(file, 1, undefined, `column "${name}" is missing from the header`);
    indexes.set(name, index);
  }
  return indexes;
}

/** The line where a record starts, from the line where it ends: a quoted cell may span lines. */
export function startLine(endLine: number, record: string[]): number {
  let newlines = 0;
  for (const cell of record) {
    for (let at = cell.indexOf("\n"); at !== -1; at = cell.indexOf("\n", at + 1)) newlines++;
  }
  return endLine - newlines;
}

/** A record's values in the table's column order, each cleaned by its column's rule. */
export function cleanRow(file: string, line: number, record: string[], indexes: Map<string, number>, table: CsvTable) {
  return [...indexes].map(([name, index]) => {
    const column = { index: index + 1, name };
    const raw = record[index];
    if (raw === undefined) throw new ImportError(file, line, column, "the row ends before this column");
    try {
      return table.columns[name]?.(raw) ?? raw;
    } catch (error) {
      if (error instanceof CellError) throw new ImportError(file, line, column, error.message);
      throw error;
    }
  });
}

/** csv-parse's errors (an unclosed quote, a stray one) in the same words as a bad cell's. */
export function parserError(file: string, line: number, error: CsvError, indexes: Map<string, number> | undefined) {
  const index = typeof error.index === "number" ? error.index : undefined;
  const name = index === undefined ? undefined : [...(indexes ?? [])].find(([, i]) => i === index)?.[0];
  const column = index === undefined ? undefined : { index: index + 1, name: name ?? `field ${index + 1}` };
  const reason =
    error.code === "CSV_QUOTE_NOT_CLOSED"
      ? "a quoted value is never closed"
      : error.message.replace(/ at line \d+.*$/, "");
  return new ImportError(file, line, column, reason);
}
