import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig({
  test: {
    projects: [
      { test: { name: "server", include: ["server/**/*.test.ts"], environment: "node", testTimeout: 30_000 } },
      {
        plugins: [svelte()],
        resolve: { conditions: ["browser"] },
        // Component tests under jsdom can take longer than 5 s on a loaded 2-core machine.
        test: { name: "app", include: ["app/**/*.test.ts"], environment: "jsdom", testTimeout: 30_000 },
      },
    ],
  },
});
