/**
 * A benchmark's own section of engine/BENCHMARKS.md, between its markers: replaced in place; the
 * first time, it goes before the runtime sections (runtime.ts rewrites everything from "## Engine
 * runtime" on, core-report.ts everything before the first "## ").
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";

export function replaceSection(name: string, section: string): void {
  const begin = `<!-- ${name} bench: begin -->`;
  const end = `<!-- ${name} bench: end -->`;
  const file = new URL("../../BENCHMARKS.md", import.meta.url);
  const before = existsSync(file) ? readFileSync(file, "utf8") : "# Engine core benchmark\n";
  const block = `${begin}\n${section.trimEnd()}\n${end}\n`;
  let out: string;
  if (before.includes(begin) && before.includes(end))
    out = before.slice(0, before.indexOf(begin)) + block + before.slice(before.indexOf(end) + end.length + 1);
  else {
    const at = ["\n## Engine runtime, measured before and after\n", "\n## Engine runtime\n"]
      .map((h) => before.indexOf(h))
      .find((i) => i >= 0);
    out =
      at === undefined
        ? `${before.trimEnd()}\n\n${block}`
        : `${before.slice(0, at).trimEnd()}\n\n${block}${before.slice(at)}`;
  }
  writeFileSync(file, out);
}
