import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Load tests run on their own afterwards (vitest.heavy.config.ts).
    exclude: ["src/**/*.heavy.test.ts", "**/node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and mostly wait on them (I/O, log time): two files at a
    // time on this 2-core machine. Every wait is on a condition, not a wall-clock margin.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
