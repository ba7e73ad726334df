import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig({
  test: {
    // Component tests under jsdom can take longer than 5 s on a loaded 2-core machine.
    testTimeout: 30_000,
    projects: [
      { test: { name: "server", include: ["server/**/*.test.ts"], environment: "node" } },
      {
        plugins: [svelte()],
        resolve: { conditions: ["browser"] },
        test: { name: "app", include: ["app/**/*.test.ts"], environment: "jsdom" },
      },
    ],
  },
});
