import { describe, expect, it } from "vitest";
import type { DashboardError } from "../errors.js";
import type { Expr } from "./ast.js";
import { durationMs, numberLiteral, stringLiteral } from "./literals.js";
import { parsePromql } from "./parse.js";

function failure(q: string): { code: string; message: string } {
  try {
    parsePromql(q);
  } catch (err) {
    const e = err as DashboardError;
    return { code: e.code, message: e.message };
  }
  throw new Error(`${q} parsed`);
}

const matchersOf = (e: Expr) =>
  e.type === "selector" ? e.matchers.map((m) => `${m.name}${m.op}${m.value}`) : "not a selector";

describe("parsePromql: the lezer-promql adapter", () => {
  it("reads number literals, arithmetic with Prometheus precedence, unary minus and parentheses", () => {
    expect(parsePromql("1+1")).toEqual({
      type: "binary",
      op: "+",
      lhs: { type: "number", value: 1 },
      rhs: { type: "number", value: 1 },
      bool: false,
      matching: { card: "one-to-one", on: false, labels: [], include: [] },
    });
    const e = parsePromql("-(2 ^ 3 ^ 2) % 7");
    expect(e.type === "binary" && e.op).toBe("%");
    expect(e.type === "binary" && e.lhs.type).toBe("unary");
    const pow = parsePromql("2 ^ 3 ^ 2");
    expect(pow.type === "binary" && pow.rhs.type).toBe("binary"); // right-associative
    expect(parsePromql("0x1F")).toEqual({ type: "number", value: 31 });
    expect(parsePromql("1e3")).toEqual({ type: "number", value: 1000 });
    expect(parsePromql("Inf")).toEqual({ type: "number", value: Infinity });
    expect(parsePromql("1h30m")).toEqual({ type: "number", value: 5400 });
  });

  it("reads selectors with =, !=, =~, !~ and the metric name as a matcher", () => {
    const e = parsePromql('tidemark_requests{policy="dashboard", service!="a", route=~"/c.*", window!~"60s"}');
    expect(matchersOf(e)).toEqual([
      "__name__=tidemark_requests",
      "policy=dashboard",
      "service!=a",
      "route=~/c.*",
      "window!~60s",
    ]);
    expect(matchersOf(parsePromql('{__name__="x", a="b"}'))).toEqual(["__name__=x", "a=b"]);
    expect(matchersOf(parsePromql("{\"x\", a='it\\'s'}"))).toEqual(["__name__=x", "a=it's"]);
  });

  it("anchors regexes fully, as Prometheus does", () => {
    const e = parsePromql('x{service=~"check"}');
    const m = e.type === "selector" ? e.matchers[1] : undefined;
    expect(m?.test("check")).toBe(true);
    expect(m?.test("checkout")).toBe(false);
    expect(m?.test("precheck")).toBe(false);
    const alt = parsePromql('x{service=~"a|b"}');
    const m2 = alt.type === "selector" ? alt.matchers[1] : undefined;
    expect([m2?.test("a"), m2?.test("b"), m2?.test("ab")]).toEqual([true, true, false]);
  });

  it("reads ranges, offsets (also before a range's function) and durations like 1m0s, 90s, 1h30m", () => {
    const e = parsePromql("rate(x[1h30m] offset 1m0s)");
    const arg = e.type === "call" ? e.args[0] : undefined;
    expect(arg?.type === "range" && arg.rangeMs).toBe(5_400_000);
    expect(arg?.type === "range" && arg.selector.offsetMs).toBe(60_000);
    const o = parsePromql("x offset -90s");
    expect(o.type === "selector" && o.offsetMs).toBe(-90_000);
  });

  it("reads aggregations with by / without in either position, and topk's k", () => {
    const a = parsePromql("sum by (service) (x)");
    expect(a.type === "aggregate" && [a.op, a.grouping, a.without]).toEqual(["sum", ["service"], false]);
    const b = parsePromql("avg(x) without (route, pane_kind)");
    expect(b.type === "aggregate" && [b.op, b.grouping, b.without]).toEqual(["avg", ["route", "pane_kind"], true]);
    const t = parsePromql("topk by (policy) (3, x)");
    expect(t.type === "aggregate" && [t.op, t.param]).toEqual(["topk", { type: "number", value: 3 }]);
  });

  it("reads comparisons with bool and vector matching with on / ignoring", () => {
    const e = parsePromql("x > bool on(service) y");
    expect(e.type === "binary" && [e.op, e.bool, e.matching]).toEqual([
      ">",
      true,
      { card: "one-to-one", include: [], on: true, labels: ["service"] },
    ]);
    const i = parsePromql("x / ignoring(quantile) y");
    expect(i.type === "binary" && i.matching).toEqual({
      card: "one-to-one",
      on: false,
      labels: ["quantile"],
      include: [],
    });
  });

  it("rejects lezer's error-recovery nodes with a 400 naming the position", () => {
    expect(failure("foo{")).toEqual({
      code: "TM_PROMQL_PARSE",
      message: "parse error at char 5: unexpected end of input",
    });
    expect(failure("1 +").message).toBe("parse error at char 4: unexpected end of input");
    expect(failure("foo bar").message).toBe('parse error at char 5: unexpected "bar"');
    expect(failure(")").message).toBe('parse error at char 1: unexpected ")"');
    expect(failure("").message).toBe("parse error at char 1: no expression found in input");
  });

  it("rejects ill-typed expressions with Prometheus's messages (400)", () => {
    const cases: Array<[string, string]> = [
      ["rate(x)", 'parse error at char 6: expected type range vector in call to function "rate", got instant vector'],
      ["sum(x[5m])", "parse error at char 5: expected type instant vector in aggregation expression, got range vector"],
      ["1 > 2", "parse error at char 1: comparisons between scalars must use BOOL modifier"],
      ["x + bool 1", "parse error at char 1: bool modifier can only be used on comparison operators"],
      ["x[5m] + 1", "parse error at char 1: binary expression must contain only scalar and instant vector types"],
      ["1 + on(a) x", "parse error at char 5: vector matching only allowed between instant vectors"],
      ['{a=""}', "parse error at char 1: vector selector must contain at least one non-empty matcher"],
      ['x{__name__="y"}', 'parse error at char 1: metric name must not be set twice: "x" or "y"'],
      ["x offset 5m[1m]", "parse error at char 1: no offset modifiers allowed before range"],
      ["topk(x, y)", "parse error at char 6: expected type scalar in aggregation parameter, got instant vector"],
      [
        "sum(x, y)",
        "parse error at char 1: wrong number of arguments for aggregate expression provided, expected 1, got 2",
      ],
      ["rate(x[0s])", "parse error at char 8: range must be greater than 0"],
      ['x{a=~"("}', 'invalid regular expression "(": error parsing regexp: missing closing ): `^(?s:()$`'],
    ];
    for (const [q, message] of cases) expect(failure(q), q).toEqual({ code: "TM_PROMQL_PARSE", message });
  });

  it("rejects valid PromQL that tidemark does not evaluate with a 422 naming the construct", () => {
    const cases: Array<[string, string]> = [
      ["histogram_count(x)", "histogram_count reads native histograms, which tidemark does not have"],
      ['sort_by_label(x, "a")', "function sort_by_label is not in Prometheus 2.42, whose PromQL tidemark answers"],
      ["limitk(1, x)", "aggregation limitk is not in Prometheus 2.42, whose PromQL tidemark answers"],
      [
        "rate(x[5m:1m])",
        'rate() over a subquery: tidemark\'s rate adds up per-window counts of a count metric (docs/prometheus-api.md, "rate, increase and irate"); use sum_over_time over the subquery instead',
      ],
      ["x[5m+1m]", 'duration expression "5m+1m" is not supported: write a duration such as 5m'],
    ];
    for (const [q, what] of cases) {
      const f = failure(q);
      expect(f.code, q).toBe("TM_PROMQL_UNSUPPORTED");
      expect(f.message, q).toBe(
        `${what} (tidemark answers Prometheus 2.42's PromQL over floats: see docs/prometheus-api.md)`,
      );
    }
  });

  it("reads what Prometheus 2.42 reads: subqueries, @, set operators, group modifiers, every float function", () => {
    const sub = parsePromql("max_over_time(rate(x[1m])[10m:30s] offset 1m @ end())");
    const arg = sub.type === "call" ? sub.args[0] : undefined;
    expect(arg?.type === "subquery" && [arg.rangeMs, arg.stepMs, arg.offsetMs, arg.at]).toEqual([
      600_000,
      30_000,
      60_000,
      "end",
    ]);
    const at = parsePromql("x @ 1700000000.5 offset -1m");
    expect(at.type === "selector" && [at.at, at.offsetMs]).toEqual([{ ms: 1_700_000_000_500 }, -60_000]);
    const g = parsePromql("x * on(a) group_left(b, c) y");
    expect(g.type === "binary" && g.matching).toEqual({
      card: "many-to-one",
      on: true,
      labels: ["a"],
      include: ["b", "c"],
    });
    const r = parsePromql("x / ignoring(a) group_right y");
    expect(r.type === "binary" && r.matching.card).toBe("one-to-many");
    const u = parsePromql("x unless on(a) y");
    expect(u.type === "binary" && [u.op, u.matching.card]).toEqual(["unless", "many-to-many"]);
    for (const q of [
      "quantile(0.9, x)",
      'count_values("v", x)',
      "bottomk(1, x)",
      "stddev without (a) (x)",
      "holt_winters(x[5m], 0.5, 0.5)",
      'label_join(x, "d", "-", "a", "b", "c")',
      "round(x)",
      "round(x, 0.5)",
      "year()",
      "time()",
      "histogram_quantile(0.9, x)",
      "absent_over_time(x[5m])",
    ])
      expect(() => parsePromql(q), q).not.toThrow();
  });

  it("types as Prometheus 2.42: wrong arguments, set operators on scalars, grouping on set operators (400)", () => {
    const cases: Array<[string, string]> = [
      ["x and 1", 'parse error at char 1: set operator "and" not allowed in binary scalar expression'],
      ["x and on(a) group_left y", 'parse error at char 13: no grouping allowed for "and" operation'],
      ["x + on(a) group_left(a) y", 'parse error at char 11: label "a" must not occur in ON and GROUP clause at once'],
      ["count_values(1, x)", "parse error at char 14: expected type string in aggregation parameter, got scalar"],
      [
        "sum(x) @ 100",
        "parse error at char 1: @ modifier must be preceded by an instant vector selector or range vector selector or a subquery",
      ],
      ["x @ 1 @ 2", "parse error at char 1: @ <timestamp> may not be set multiple times"],
      ["(x[5m])[10m:]", "parse error at char 1: subquery is only allowed on instant vector, got range vector"],
      ["clamp(x, 1)", 'parse error at char 1: expected 3 argument(s) in call to "clamp", got 2'],
      ["round(x, 1, 2)", 'parse error at char 1: expected at most 2 argument(s) in call to "round", got 3'],
      ['label_join(x, "a")', 'parse error at char 1: expected at least 4 argument(s) in call to "label_join", got 2'],
    ];
    for (const [q, message] of cases) expect(failure(q), q).toEqual({ code: "TM_PROMQL_PARSE", message });
  });
});

describe("PromQL literals", () => {
  it("reads durations with units largest first, or seconds", () => {
    expect(durationMs("1m0s")).toBe(60_000);
    expect(durationMs("90s")).toBe(90_000);
    expect(durationMs("1h30m")).toBe(5_400_000);
    expect(durationMs("1w2d")).toBe(9 * 86_400_000);
    expect(durationMs("250ms")).toBe(250);
    expect(durationMs("1.5")).toBe(1500);
    expect(durationMs("30m1h")).toBeUndefined();
    expect(durationMs("5 m")).toBeUndefined();
  });

  it("reads numbers and Go-escaped strings", () => {
    expect(numberLiteral("-Inf")).toBe(-Infinity);
    expect(numberLiteral("nan")).toBeNaN();
    expect(numberLiteral(".5")).toBe(0.5);
    expect(numberLiteral("abc")).toBeUndefined();
    expect(stringLiteral('"a\\n\\"b\\x41\\u00e9"')).toBe('a\n"bAé');
    expect(stringLiteral("`raw\\n`")).toBe("raw\\n");
    expect(stringLiteral('"bad\\q"')).toBeUndefined();
  });
});
