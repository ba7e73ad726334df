import { describe, expect, it } from "vitest";
import { evaluateInstant } from "./evaluate.js";
import { evaluateRange } from "./range-steps.js";
import { parsePromql } from "./parse.js";
import { QueryGuard, QueryLimitError, type GuardClock, type QueryLimit } from "./query-guard.js";
import { rangeSteps } from "./range-steps.js";
import { testSource, type TestSeries } from "./series.fixture.js";

const T0 = 1_700_000_000;
/** 10 series of 100 one-second samples, T0+1 … T0+100. */
const SERIES: TestSeries[] = Array.from({ length: 10 }, (_, s) => ({
  labels: { __name__: "m", s: String(s) },
  points: Array.from({ length: 100 }, (_, i): [number, number] => [T0 + 1 + i, i]),
  stepMs: 1000,
}));
const source = testSource(SERIES);
const range = { startMs: (T0 + 1) * 1000, endMs: (T0 + 100) * 1000, stepMs: 1000 };
const still: GuardClock = { now: () => 0, deadline: 1, aborted: () => false };
const guard = (maxSeries: number, maxSamples: number, clock = still, maxStepMs = Infinity) =>
  new QueryGuard({ maxSeries, maxSamples, maxStepMs }, clock);

function limitOf(run: () => unknown): QueryLimit | "none" {
  try {
    run();
    return "none";
  } catch (err) {
    if (err instanceof QueryLimitError) return err.limit;
    throw err;
  }
}

describe("QueryGuard: a query's counted bounds", () => {
  it("counts the series every selector selects, up to the limit exactly", () => {
    const q = parsePromql("m + m"); // two selectors of 10 series each
    expect(limitOf(() => evaluateInstant(q, source, range.endMs, { guard: guard(20, 1e9) }))).toBe("none");
    expect(limitOf(() => evaluateInstant(q, source, range.endMs, { guard: guard(19, 1e9) }))).toBe("series");
  });

  it("counts the samples loaded and the result's points: a plain selector's range query holds all of both", () => {
    // Brute force: every sample is loaded (all lie within the query's span and lookback), and every
    // step from the series' first sample on has a point (a 5 m lookback), 10 × 100 each.
    const held = 10 * 100 + 10 * 100;
    const q = parsePromql("m");
    expect(limitOf(() => evaluateRange(q, source, range, { guard: guard(10, held) }))).toBe("none");
    expect(limitOf(() => evaluateRange(q, source, range, { guard: guard(10, held - 1) }))).toBe("samples");
  });

  it("counts a range selector's points within its step, and lets them go after it", () => {
    // count_over_time(m[9s]) at T0+100 loads the samples in [T0+91, T0+100], 10 per series, and
    // holds the same 100 at once as the step's range points.
    const q = parsePromql("count_over_time(m[9s])");
    const t = range.endMs;
    expect(limitOf(() => evaluateInstant(q, source, t, { guard: guard(10, 200) }))).toBe("none");
    expect(limitOf(() => evaluateInstant(q, source, t, { guard: guard(10, 199) }))).toBe("samples");
    // Over 3 steps (T0+98…T0+100): 12 loaded per series, 10 range points per step let go after it,
    // 1 result point per step held: 120 + 100 + 20 at the last step's peak.
    const last3 = { startMs: t - 2000, endMs: t, stepMs: 1000 };
    expect(limitOf(() => evaluateRange(q, source, last3, { guard: guard(10, 240) }))).toBe("none");
    expect(limitOf(() => evaluateRange(q, source, last3, { guard: guard(10, 239) }))).toBe("samples");
  });

  it("stops at the deadline and when the client went away, naming why", () => {
    let ticks = 0;
    const clock: GuardClock = { now: () => ticks++, deadline: 50, aborted: () => false };
    const q = parsePromql("sum(m)");
    expect(limitOf(() => evaluateRange(q, source, range, { guard: guard(10, 1e9, clock) }))).toBe("timeout");
    expect(ticks).toBe(52); // checked after each step: steps 0…50 within, the 52nd check past it
    let asked = 0;
    const gone: GuardClock = { now: () => 0, deadline: 1, aborted: () => ++asked > 3 };
    expect(limitOf(() => evaluateRange(q, source, range, { guard: guard(10, 1e9, gone) }))).toBe("canceled");
    expect(asked).toBe(4);
  });

  it("yields after every step of a range query, and after every series of a plain selector", () => {
    const count = (text: string): number => {
      const steps = rangeSteps(parsePromql(text), source, range);
      let n = 0;
      while (!steps.next().done) n++;
      return n;
    };
    expect(count("sum(m)")).toBe(100);
    expect(count("m")).toBe(10);
  });

  it("counts a subquery's cached evaluations as held and checks the deadline at each", () => {
    let ticks = 0;
    const clock: GuardClock = { now: () => ticks++, deadline: 10, aborted: () => false };
    const q = parsePromql("max_over_time(sum(m)[50s:1s])");
    expect(limitOf(() => evaluateInstant(q, source, range.endMs, { guard: guard(10, 1e9, clock) }))).toBe("timeout");
    expect(ticks).toBe(12);
  });

  it("stops a step that holds the event loop past maxStepMs, counting from the last turn", () => {
    let ticks = 0;
    const clock: GuardClock = { now: () => ticks++, deadline: 1e9, aborted: () => false };
    const q = parsePromql("max_over_time(sum(m)[50s:1s])");
    const g = guard(10, 1e9, clock, 20);
    expect(limitOf(() => evaluateInstant(q, source, range.endMs, { guard: g }))).toBe("step_time");
    expect(ticks).toBe(22); // the constructor's now(), then checks at 1…21: 21 − 0 > 20
    g.resumed();
    expect(limitOf(() => g.check())).toBe("none");
  });
});
