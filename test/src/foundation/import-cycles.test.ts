/**
 * No import cycles in engine/src and dashboard/ (server, app, protocol; .ts and .svelte), and the
 * app imports nothing from the server (docs/architecture.md, "Allowed imports"). ESLint cannot
 * see .svelte files, so the app's rule is checked here on the import graph as well.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { importCycles, importGraph, relativeImports, type ImportCycle } from "./import-graph.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const here = fileURLToPath(new URL(".", import.meta.url));

/** "a.ts → b.ts → a.ts", plus how many more files the same knot holds. */
const show = (cycles: ImportCycle[]): string[] =>
  cycles.map(({ cycle, files }) => {
    const more = files.length - (cycle.length - 1);
    const knot = `and ${more} more file${more === 1 ? "" : "s"} in the same knot: ${files.join(", ")}`;
    return cycle.join(" → ") + (more > 0 ? ` (${knot})` : "");
  });

describe("import graph", () => {
  it("finds the 2-file cycle of the fixture, naming both files", () => {
    const cycles = importCycles(importGraph(here, ["__fixtures__/cycle"]));
    expect(show(cycles)).toEqual([
      "__fixtures__/cycle/clock.ts → __fixtures__/cycle/tick.ts → __fixtures__/cycle/clock.ts",
    ]);
  });

  it("reads static imports and re-exports only, ignoring comments, strings and dynamic import()", () => {
    const code = [
      `// import { a } from "./commented.js";`,
      `import { b } from "./b.js";`,
      `import type { C } from "../c.js";`,
      `import "./side-effect.js";`,
      `export { d } from "./d.js";`,
      `export * from "./e.js";`,
      `const s = 'import { f } from "./f.js"';`,
      `const lazy = () => import("./lazy.js");`,
      `import { g } from "@tidemark/engine/core";`,
    ].join("\n");
    expect(relativeImports(code)).toEqual(["./b.js", "../c.js", "./side-effect.js", "./d.js", "./e.js"]);
  });

  it("follows the .svelte files' script imports", () => {
    const graph = importGraph(root, ["dashboard/app"]);
    expect(graph.get("dashboard/app/App.svelte")).toContain("dashboard/protocol/ws-frames.ts");
    expect(graph.get("dashboard/app/components/Panel.svelte")).toContain("dashboard/app/lib/live.svelte.ts");
  });
});

describe("the sources", () => {
  // One graph of the whole of engine/src, its cycles split by where they lie, so a failure says
  // which layer to fix.
  const engineCycles = importCycles(importGraph(root, ["engine/src"]));
  const inCore = (c: ImportCycle): boolean => c.files.every((f) => f.startsWith("engine/src/core/"));

  it("have no import cycle in engine/src through a file outside the core", () => {
    expect(show(engineCycles.filter((c) => !inCore(c)))).toEqual([]);
  });

  it("have no import cycle in engine/src/core", () => {
    expect(show(engineCycles.filter(inCore))).toEqual([]);
  });

  it("have no import cycle in dashboard/ (server, app, protocol)", () => {
    expect(show(importCycles(importGraph(root, ["dashboard/server", "dashboard/app", "dashboard/protocol"])))).toEqual(
      [],
    );
  });

  it("let no dashboard/app file (.ts or .svelte) import from dashboard/server", () => {
    const graph = importGraph(root, ["dashboard/app"]);
    const crossing = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => t.startsWith("dashboard/server/")).map((t) => `${file} → ${t}`),
    );
    expect(crossing).toEqual([]);
  });
});
