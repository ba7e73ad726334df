import { parser } from "@prometheus-io/lezer-promql";
import { describe, expect, it, vi } from "vitest";
import { MAX_NESTING } from "./nesting.js";
import { parsePromql } from "./parse.js";

describe("nesting bound", () => {
  it("parses MAX_NESTING levels and refuses one more, before the parser runs, naming where", () => {
    const nest = (n: number) => `${"(".repeat(n)}1${")".repeat(n)}`;
    expect(parsePromql(nest(MAX_NESTING)).type).toBe("number"); // parentheses fold away
    expect(() => parsePromql(nest(MAX_NESTING + 1))).toThrow(
      `parse error at char ${MAX_NESTING + 1}: the query nests deeper than ${MAX_NESTING} levels`,
    );
    // The parser never sees it (a parse of it took ~600 ms): the bound is checked on the text first.
    const parse = vi.spyOn(parser, "parse");
    try {
      expect(() => parsePromql(nest(20_000))).toThrow(/nests deeper/);
      expect(parse).not.toHaveBeenCalled();
      parsePromql(nest(MAX_NESTING));
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it("does not count brackets inside strings or comments", () => {
    const opens = "(".repeat(MAX_NESTING + 1);
    expect(() => parsePromql(`x{a="${opens}"}`)).not.toThrow();
    expect(() => parsePromql(`x{a='\\'${opens}'}`)).not.toThrow();
    expect(() => parsePromql(`x{a=\`${opens}\`}`)).not.toThrow();
    expect(() => parsePromql(`x # ${opens}\n + 1`)).not.toThrow();
  });
});
