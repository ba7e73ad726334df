import { defineConfig } from "vitest/config";

/**
 * Tests that put a real load on the machine (src/**\/*.heavy.test.ts): run after the others, one
 * file at a time, so that no other test competes for the two cores they measure.
 */
export default defineConfig({
  test: {
    include: ["src/**/*.heavy.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
