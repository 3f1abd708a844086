// `npm run data:import [-- DIR]`: loads cars.csv, coe.csv and pqp.csv from DIR
// (default: the sample copy in data/sample/sg) into DATABASE_URL's database.
import { loadConfig } from "../config.js";
import { connectMigrated } from "../db/migrations.js";
import { type FileSummary, importDirectory, sampleDataDir } from "../modules/data/importer/importer.js";
import { progressBar } from "./progress.js";

const usage = "usage: npm run data:import [-- DIR]   (DIR defaults to the sample data, data/sample/sg)";

const describe = (summaries: FileSummary[]) =>
  summaries
    .map(
      ({ file, rows, added }) => `${file} ${rows.toLocaleString("en-US")} rows (${added.toLocaleString("en-US")} new)`,
    )
    .join(", ");

async function main(args: string[]): Promise<number> {
  if (args.length > 1 || args[0]?.startsWith("-")) {
    process.stderr.write(`${usage}\n`);
    return args[0] === "--help" || args[0] === "-h" ? 0 : 2;
  }
  const dir = args[0] ?? sampleDataDir;
  const config = loadConfig();
  const db = await connectMigrated(config.databaseUrl);
  const done: FileSummary[] = [];
  const started = performance.now();
  try {
    await importDirectory(db, dir, {
      onProgress: process.stderr.isTTY ? progressBar(process.stderr) : undefined,
      onFile: (summary) => done.push(summary),
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stdout.write(`Imported ${dir} in ${seconds} s: ${describe(done)}\n`);
    return 0;
  } catch (error) {
    if (process.stderr.isTTY) process.stderr.write("\n");
    const kept = done.length > 0 ? ` (already imported: ${describe(done)})` : "";
    process.stderr.write(`Import failed: ${error instanceof Error ? error.message : String(error)}${kept}\n`);
    return 1;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`Import failed: ${message}\n`);
    process.exitCode = 1;
  },
);
