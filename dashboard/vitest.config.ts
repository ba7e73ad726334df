import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig({
  test: {
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
