import { describe, expect, it } from "vitest";
import { MAX_NESTING } from "./nesting.js";
import { parsePromql } from "./parse.js";

describe("nesting bound", () => {
  it("parses MAX_NESTING levels and refuses one more, before the parser runs, naming where", () => {
    const nest = (n: number) => `${"(".repeat(n)}1${")".repeat(n)}`;
    expect(parsePromql(nest(MAX_NESTING)).type).toBe("number"); // parentheses fold away
    expect(() => parsePromql(nest(MAX_NESTING + 1))).toThrow(
      `parse error at char ${MAX_NESTING + 1}: the query nests deeper than ${MAX_NESTING} levels`,
    );
    const t = performance.now();
    expect(() => parsePromql(nest(20_000))).toThrow(/nests deeper/);
    expect(performance.now() - t).toBeLessThan(1000); // the parser never sees it (it took ~600 ms)
  });

  it("does not count brackets inside strings or comments", () => {
    const opens = "(".repeat(MAX_NESTING + 1);
    expect(() => parsePromql(`x{a="${opens}"}`)).not.toThrow();
    expect(() => parsePromql(`x{a='\\'${opens}'}`)).not.toThrow();
    expect(() => parsePromql(`x{a=\`${opens}\`}`)).not.toThrow();
    expect(() => parsePromql(`x # ${opens}\n + 1`)).not.toThrow();
  });
});
