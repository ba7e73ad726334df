/**
 * The static import graph of a source tree (docs/architecture.md, "Allowed imports"): every
 * `import … from`, `import "…"` and `export … from` of a relative path, in .ts files and in the
 * `<script>` blocks of .svelte files, parsed with the TypeScript compiler (so comments and
 * strings are never mistaken for imports). Dynamic `import()` is lazy and not an edge. Type-only
 * imports are edges: they are structure too.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** File (relative to the root given to `importGraph`) → the files it imports, in source order. */
export type ImportGraph = Map<string, string[]>;

const SKIP_DIRS = new Set(["node_modules", "dist", ".turbo"]);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP_DIRS.has(name)) out.push(...sourceFiles(path));
    } else if ((name.endsWith(".ts") && !name.endsWith(".d.ts")) || name.endsWith(".svelte")) out.push(path);
  }
  return out;
}

/** The code of a file: a .ts file whole, a .svelte file's script blocks. */
function scriptOf(path: string): string {
  const text = readFileSync(path, "utf8");
  if (!path.endsWith(".svelte")) return text;
  return [...text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]).join("\n");
}

/** Relative module specifiers of the static imports and re-exports of `code`. */
export function relativeImports(code: string, fileName = "x.ts"): string[] {
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const specs: string[] = [];
  for (const s of source.statements) {
    const spec =
      (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier
        ? (s.moduleSpecifier as ts.StringLiteral).text
        : undefined;
    if (spec !== undefined && spec.startsWith(".")) specs.push(spec);
  }
  return specs;
}

/** The file a relative specifier names: `./x.js` → x.ts, `./s.svelte.js` → s.svelte.ts, `./V.svelte`. */
function resolveSpec(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  const candidates = [base, base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/** The graph of every .ts and .svelte file under each of `dirs`, named relative to `root`. */
export function importGraph(root: string, dirs: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const dir of dirs)
    for (const file of sourceFiles(resolve(root, dir))) {
      const targets = relativeImports(scriptOf(file), file)
        .map((spec) => resolveSpec(file, spec))
        .filter((t): t is string => t !== undefined)
        .map((t) => relative(root, t));
      graph.set(relative(root, file), [...new Set(targets)]);
    }
  return graph;
}

/** A set of files that import each other in a circle (a strongly connected component), with one cycle through it. */
export interface ImportCycle {
  /** A shortest path from the component's first file back to it, e.g. ["a.ts", "b.ts", "a.ts"]. */
  cycle: string[];
  /** Every file of the component, sorted. */
  files: string[];
}

/** Every group of files caught in import cycles (Tarjan's strongly connected components). */
export function importCycles(graph: ImportGraph): ImportCycle[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((c) => ({ cycle: cycleWithin(graph, new Set(c)), files: [...c].sort() }));
}

/** One concrete cycle through the smallest file of a component (breadth-first, so a shortest one). */
function cycleWithin(graph: ImportGraph, members: ReadonlySet<string>): string[] {
  const start = [...members].sort()[0] as string;
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() as string;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const back: string[] = [];
        for (let at: string | undefined = v; at !== undefined && at !== start; at = parent.get(at)) back.push(at);
        return [start, ...back.reverse(), start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}
