import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

/** Builds the Svelte app (app/) to dist/app, which the dashboard server serves. */
export default defineConfig({
  root: fileURLToPath(new URL("./app", import.meta.url)),
  base: "./",
  plugins: [svelte()],
  build: {
    outDir: fileURLToPath(new URL("./dist/app", import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 800,
  },
  server: { proxy: { "/ws": { target: "ws://127.0.0.1:3000", ws: true }, "/api": "http://127.0.0.1:3000" } },
});
