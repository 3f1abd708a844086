import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { progressBar } from "../src/cli/progress.js";
import { createLogger } from "../src/logger.js";
import { ImportError, importDirectory, sampleDataDir } from "../src/modules/data/importer/importer.js";
import { seedSampleData } from "../src/modules/data/importer/seed.js";
import { projectRoot } from "../src/project-root.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { csvDir, get } from "./helpers/data.js";

const run = promisify(execFile);

// `loaded` starts from the sample data; `partial` starts empty and gets a few
// hand-made rows, for the cleaning rules and the table-by-table seeding.
let loaded: TestApp;
let partial: TestApp;
beforeAll(async () => {
  [loaded, partial] = await Promise.all([startTestApp({}, { sampleData: true }), startTestApp()]);
});
afterAll(() => Promise.all([loaded.close(), partial.close()]));

const totals = async (app: TestApp) => ({
  cars: (await get(app, "/v2/cars")).body.meta.total,
  coe: (await get(app, "/v2/coe")).body.meta.total,
  pqp: (await get(app, "/v2/pqp")).body.meta.total,
});

const carsHeader = "month,make,fuel_type,vehicle_type,number\r\n";
const coeHeader = "month,bidding_no,vehicle_class,quota,bids_success,bids_received,premium\n";

describe("importing the sample again", () => {
  it("leaves the same rows with the same values", async () => {
    expect(await totals(loaded)).toEqual({ cars: 21270, coe: 1925, pqp: 536 });
    const before = await get(loaded, "/v1/cars?month=2020-06");
    const summaries = await importDirectory(loaded.database.db, sampleDataDir);
    expect(summaries).toEqual([
      { file: "cars.csv", table: "car_registrations", rows: 21270, added: 0 },
      { file: "coe.csv", table: "coe_results", rows: 1925, added: 0 },
      { file: "pqp.csv", table: "quota_premiums", rows: 536, added: 0 },
    ]);
    expect(await totals(loaded)).toEqual({ cars: 21270, coe: 1925, pqp: 536 });
    const after = await get(loaded, "/v1/cars?month=2020-06");
    expect(after.res.headers.get("etag")).toBe(before.res.headers.get("etag"));
  });
});

describe("a broken file", () => {
  // Each file first changes a row that exists, then breaks: the change must not survive.
  const cases = [
    {
      name: "a bad month",
      file: "cars.csv",
      content: `${carsHeader}2021-01,BMW,Petrol,Sedan,999\r\n2021-13,BMW,Petrol,Sedan,1\r\n`,
      where: 'line 3, column 1 (month): "2021-13" is not a month (YYYY-MM)',
    },
    {
      name: "a non-number",
      file: "coe.csv",
      content: `${coeHeader}2025-06,1,Category A,1,1,1,1\n2025-06,1,Category B,795,795,974,113k\n`,
      where: 'line 3, column 7 (premium): "113k" is not a whole number',
    },
    {
      name: "a missing column in the header",
      file: "pqp.csv",
      content: "month,vehicle_class\r\n2021-03,Category A\r\n",
      where: 'line 1: column "pqp" is missing from the header',
    },
    {
      name: "a short row",
      file: "pqp.csv",
      content: "month,vehicle_class,pqp\r\n2021-03,Category A,1\r\n2021-03,Category B\r\n",
      where: "line 3, column 3 (pqp): the row ends before this column",
    },
    {
      name: "a bad value after a quoted line break",
      file: "pqp.csv",
      content: 'month,vehicle_class,pqp\n2021-03,"Category\nA",1\n2021-03,Category B,x\n',
      where: 'line 4, column 3 (pqp): "x" is not a whole number',
    },
    {
      name: "a truncated quote",
      file: "coe.csv",
      content: `${coeHeader}2025-06,1,Category A,1,1,1,1\n2025-06,1,Category B,795,"795,974,113000\n2025-06,1,Category C,1,1,1,1\n`,
      where: "line 3, column 5 (bids_success): a quoted value is never closed",
    },
  ];

  it.each(cases)("with $name changes nothing and names file, line and column", async ({ file, content, where }) => {
    const before = await totals(loaded);
    const sample = await get(loaded, "/v1/coe?month=2025-06");
    const cars = await get(loaded, "/v1/cars?month=2021-01&make=BMW");
    const pqp = await get(loaded, "/v1/pqp?month=2021-03");
    const dir = csvDir({ [file]: content });
    const failure = await importDirectory(loaded.database.db, dir).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ImportError);
    expect((failure as Error).message).toBe(`${join(dir, file)}, ${where}; nothing from this file was imported`);
    expect(await totals(loaded)).toEqual(before);
    expect((await get(loaded, "/v1/coe?month=2025-06")).text).toBe(sample.text);
    expect((await get(loaded, "/v1/cars?month=2021-01&make=BMW")).text).toBe(cars.text);
    expect((await get(loaded, "/v1/pqp?month=2021-03")).text).toBe(pqp.text);
  });

  it("after a good file keeps the good file: each file is its own transaction", async () => {
    const dir = csvDir({
      "cars.csv": `${carsHeader}2030-01,TOYOTA,Petrol,Sedan,5\r\n`,
      "coe.csv": `${coeHeader}2030-01,1,Category A,1,1,1,oops\n`,
    });
    const committed: string[] = [];
    await expect(
      importDirectory(partial.database.db, dir, { onFile: (summary) => committed.push(summary.file) }),
    ).rejects.toThrow("column 7 (premium)");
    expect(committed).toEqual(["cars.csv"]);
    expect((await get(partial, "/v2/cars?month=2030-01")).body.meta.total).toBe(1);
    expect((await get(partial, "/v2/coe?month=2030-01")).body.meta.total).toBe(0);
  });
});

describe("the cleaning rules", () => {
  it("drops dots from makes, spaces around slashes, thousands separators; an empty count is 0", async () => {
    const dir = csvDir({
      "cars.csv": `\uFEFF${carsHeader}2030-02,B.M.W.,Petrol,Coupe/ Convertible,\r\n2030-02,Mclaren,Petrol,Sedan,"1,274"\r\n`,
      "coe.csv": `${coeHeader}2030-02,1,Category A,1200,"1,190",,"120,001"\n`,
    });
    await importDirectory(partial.database.db, dir);
    expect((await get(partial, "/v1/cars?month=2030-02")).body.data).toEqual([
      { month: "2030-02", make: "BMW", fuel_type: "Petrol", vehicle_type: "Coupe/Convertible", number: 0 },
      { month: "2030-02", make: "MCLAREN", fuel_type: "Petrol", vehicle_type: "Sedan", number: 1274 },
    ]);
    expect((await get(partial, "/v1/coe?month=2030-02")).body.data).toEqual([
      {
        month: "2030-02",
        bidding_no: 1,
        vehicle_class: "Category A",
        quota: 1200,
        bids_success: 1190,
        bids_received: 0,
        premium: 120001,
      },
    ]);
  });
});

describe("seeding at start", () => {
  it("fills only the tables that are empty, once", async () => {
    const before = await totals(partial);
    expect(before).toEqual({ cars: 3, coe: 1, pqp: 0 });
    const logs: Record<string, unknown>[] = [];
    const logger = createLogger("info", { write: (line: string) => logs.push(JSON.parse(line)) });
    await seedSampleData(partial.database.db, logger);
    expect(await totals(partial)).toEqual({ ...before, pqp: 536 });
    expect(logs.map((line) => line.msg)).toEqual(["sample data imported"]);
    await seedSampleData(partial.database.db, logger);
    expect(logs).toHaveLength(1);
  });
});

describe("npm run data:import", () => {
  const cli = (dir: string, databaseUrl: string) =>
    run(process.execPath, ["--import", "tsx", "src/cli/data-import.ts", dir], {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: databaseUrl },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  it("prints one summary line when not on a terminal, and the failure with exit code 1", async () => {
    const good = csvDir({ "pqp.csv": "month,vehicle_class,pqp\n2030-01,Category A,1\n2030-01,Category B,2\n" });
    const bad = csvDir({ "pqp.csv": "month,vehicle_class,pqp\n2030-02,Category A,x\n" });
    const [ok, failed] = await Promise.all([cli(good, partial.database.url), cli(bad, partial.database.url)]);
    expect(ok.stderr).toBe("");
    expect(ok.stdout).toMatch(/^Imported \S+ in \d+\.\d s: pqp\.csv 2 rows \(2 new\)\n$/);
    expect(ok.code).toBe(0);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toBe(
      `Import failed: ${join(bad, "pqp.csv")}, line 2, column 3 (pqp): "x" is not a whole number; nothing from this file was imported\n`,
    );
    expect((await get(partial, "/v2/pqp?month=2030-02")).body.meta.total).toBe(0);
  });

  it("draws a progress bar that ends its line when a file is done", () => {
    let screen = "";
    const draw = progressBar({ write: (text: string) => (screen += text) });
    draw({ file: "cars.csv", bytes: 100, totalBytes: 200, rows: 10, done: false });
    expect(screen).toMatch(/^\rcars\.csv █{15}░{15} {2}50% {2}10 rows$/);
    draw({ file: "cars.csv", bytes: 200, totalBytes: 200, rows: 21270, done: true });
    expect(screen.endsWith(`\rcars.csv ${"█".repeat(30)} 100%  21,270 rows\n`)).toBe(true);
  });
});
