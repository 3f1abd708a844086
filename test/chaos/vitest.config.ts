import { defineConfig } from "vitest/config";

// `npm run test:chaos`: the service as a separate process under hostile load.
// Scenarios measure latency, so they run one at a time; each takes its time.
export default defineConfig({
  test: {
    include: ["test/chaos/**/*.chaos.ts"],
    globalSetup: ["test/chaos/global-setup.ts"],
    reporters: ["default", "./test/chaos/reporter.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 120_000,
  },
});
