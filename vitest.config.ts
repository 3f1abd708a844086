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
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
