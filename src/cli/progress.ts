import type { FileProgress } from "../modules/data/importer/importer.js";

const WIDTH = 30;
// Redrawing on every batch would cost more than the import itself on a slow terminal.
const REDRAW_MS = 80;

/** A one-line progress bar per file, redrawn in place on a terminal. */
export function progressBar(out: { write(text: string): unknown }) {
  let lastDraw = 0;
  return ({ file, bytes, totalBytes, rows, done }: FileProgress) => {
    const now = performance.now();
    if (!done && now - lastDraw < REDRAW_MS) return;
    lastDraw = now;
    const ratio = totalBytes === 0 ? 1 : Math.min(1, bytes / totalBytes);
    const filled = Math.round(ratio * WIDTH);
    const bar = `${"█".repeat(filled)}${"░".repeat(WIDTH - filled)}`;
    const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
    out.write(`\r${file.padEnd(8)} ${bar} ${percent}  ${rows.toLocaleString("en-US")} rows${done ? "\n" : ""}`);
  };
}
