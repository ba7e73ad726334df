import { defineConfig } from "vitest/config";

export default defineConfig({
  // Property and fuzz tests do bounded work that a loaded 2-core machine can take longer than 5 s for.
  test: { include: ["src/**/*.test.ts"], testTimeout: 30_000 },
});
