import { describe, expect, it } from "vitest";
import { matcher } from "./matcher.js";

describe("regex matchers (RE2)", () => {
  it("anchor the whole value, let . match a newline, and take RE2 flags", () => {
    const m = matcher("a", "=~", "b.c");
    expect(["b\nc", "bxc"].map(m.test)).toEqual([true, true]);
    expect(["xbxc", "bxcx", "bc"].map(m.test)).toEqual([false, false, false]);
    expect(matcher("a", "=~", "(?i)api").test("API")).toBe(true);
    expect(matcher("a", "=~", "api|web").test("web")).toBe(true);
    expect(matcher("a", "!~", "api|web").test("webx")).toBe(true);
    expect(matcher("a", "=~", ".+").test("")).toBe(false);
  });

  it("answer a backtracking bomb by the answer, not by running for ever", () => {
    // A backtracking engine takes 2^n steps on (.|.)*X against n characters without an X.
    const m = matcher("__name__", "=~", "(.|.)*X");
    expect(m.test("a".repeat(5000))).toBe(false);
    expect(m.test(`${"a".repeat(5000)}X`)).toBe(true);
    expect(matcher("a", "=~", "(a+)+b").test("a".repeat(5000))).toBe(false);
  });

  it("refuse what RE2 does not have (lookaround, backreferences) as Prometheus does, naming the regex", () => {
    expect(() => matcher("a", "=~", "a(?=b)")).toThrow(/invalid regular expression "a\(\?=b\)".*Perl syntax/);
    expect(() => matcher("a", "=~", "(a)\\1")).toThrow(/invalid regular expression/);
  });

  it("answers a value seen before as the first time (values are remembered per matcher)", () => {
    const eq = matcher("s", "=~", "api|web");
    const ne = matcher("s", "!~", "api|web");
    const values = ["api", "db", "web", "api", "db", "", "web", ""];
    expect(values.map(eq.test)).toEqual([true, false, true, true, false, false, true, false]);
    expect(values.map(ne.test)).toEqual(values.map((v) => !["api", "web"].includes(v)));
  });
});
