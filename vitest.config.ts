import { defineConfig } from "vitest/config";

// Browser tests need Debian's Chromium: they run with `npm run test:browser`
// (and in CI), so that `npm test` needs nothing beyond `npm install`.
const browser = process.env.TEST_BROWSER === "1";

// Tests that time the service against a wall-clock bound of the contract (`npm
// start` answers within 3 s) run after the rest, one file at a time: beside
// three other files on two cores they measure the contention, not the service.
// So does the accept queue's drain: its burst of 150 connections was partly
// reset (ECONNRESET) in two runs beside the PostgreSQL suite's processes.
const timed = ["test/npm-start.test.ts", "test/shutdown-accept-queue.test.ts"];

export default defineConfig({
  test: {
    globalSetup: ["test/helpers/global-setup.ts"],
    pool: "forks",
    // Most test files wait on child processes, sockets and timers rather than
    // the CPU, so four workers finish the suite in less than half the time of
    // the default (one fewer than the cores: a single worker on two cores).
    maxWorkers: 4,
    // A guard against a hung test, not a measure (bounds a test asserts are
    // its own): on a slower or shared host the process tests and the
    // thousands of requests some tests send take 2–3× their usual time.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: browser
      ? [{ extends: true, test: { name: "browser", include: ["test/browser/**/*.test.ts"] } }]
      : [
          {
            extends: true,
            test: {
              name: "suite",
              include: ["test/**/*.test.ts"],
              exclude: ["test/browser/**", "**/node_modules/**", ...timed],
              sequence: { groupOrder: 0 },
            },
          },
          {
            extends: true,
            test: { name: "timed", include: timed, fileParallelism: false, sequence: { groupOrder: 1 } },
          },
        ],
  },
});
