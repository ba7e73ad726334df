import type { Labels } from "./labels.js";
import { matchesAll, type Matcher } from "./matcher.js";
import type { Queryable, SeriesView } from "./queryable.js";

/** A test series: points as [seconds, value] or [seconds, value, kind]; `kind` becomes the sample label `pane_kind`. */
export interface TestSeries {
  labels: Labels;
  points: Array<[number, number] | [number, number, string]>;
  additive?: boolean;
  stepMs?: number;
}

export interface TestSource extends Queryable {
  /** Sample indices the engine touched, per series (by position in the list). */
  touched: Array<Set<number>>;
}

/** An in-memory Queryable; a matcher on `pane_kind` selects samples, like the pane series. */
export function testSource(list: TestSeries[]): TestSource {
  const touched = list.map(() => new Set<number>());
  return {
    touched,
    select(matchers: readonly Matcher[]): SeriesView[] {
      const identity = matchers.filter((m) => m.name !== "pane_kind");
      const kind = matchers.filter((m) => m.name === "pane_kind");
      return list.flatMap((s, n) => {
        if (!matchesAll(s.labels, identity)) return [];
        const kindOf = (i: number): string => (s.points[i] as unknown[])[2] as string;
        const view: SeriesView = {
          labels: s.labels,
          length: s.points.length,
          time: (i) => (s.points[i]?.[0] ?? 0) * 1000,
          value: (i) => s.points[i]?.[1] ?? NaN,
          present: (i) => kind.every((m) => m.test(kindOf(i) ?? "")),
          sampleLabels: (i) => (kindOf(i) === undefined ? s.labels : { ...s.labels, pane_kind: kindOf(i) }),
          additive: s.additive ?? true,
          stepMs: s.stepMs ?? 10_000,
          touch: (i) => touched[n]?.add(i),
        };
        return [view];
      });
    },
  };
}
