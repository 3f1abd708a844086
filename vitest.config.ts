import { defineConfig } from "vitest/config";

// Browser tests need Debian's Chromium: they run with `npm run test:browser`
// (and in CI), so that `npm test` needs nothing beyond `npm install`.
const browser = process.env.TEST_BROWSER === "1";

export default defineConfig({
  test: {
    include: browser ? ["test/browser/**/*.test.ts"] : ["test/**/*.test.ts"],
    exclude: browser ? [] : ["test/browser/**", "**/node_modules/**"],
    globalSetup: ["test/helpers/global-setup.ts"],
    pool: "forks",
    // Most test files wait on child processes, sockets and timers rather than
    // the CPU, so four workers finish the suite in less than half the time of
    // the default (one fewer than the cores: a single worker on two cores).
    maxWorkers: 4,
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
