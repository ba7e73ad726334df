import { describe, expect, it } from "vitest";
import { prng } from "../prng.fixture.js";
import type { Pane } from "@tidemark/engine/protocol";
import { testPane } from "../../protocol/pane.fixture.js";
import { matcher, type Matcher } from "../promql/index.js";
import { PaneSamples } from "./pane-samples.js";
import { KINDS } from "./pane-series.js";

describe("PaneView.readPresent", () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`seed ${seed}: reads what present(), time() and value() give one by one (retracts, kinds, unmeasured bias)`, () => {
      const r = prng(seed);
      const samples = new PaneSamples({ windowsPerSeries: 1000, maxWindows: 100_000, discardingPolicies: [] });
      for (let w = 0; w < 300; w++) {
        if (r() < 0.1) continue;
        const count = Math.floor(r() * 50);
        const pane: Pane = testPane({
          start: 1_700_000_000_000 + w * 10_000,
          kind: KINDS[Math.floor(r() * KINDS.length)] as Pane["kind"],
          count,
          errors: Math.floor(r() * (count + 1)),
          bias: {
            countPct: r() < 0.5 ? null : r() * 10,
            errorRatePp: null,
            p99Pct: r() < 0.5 ? null : -r(),
            usersPct: null,
            windows: 3,
          },
        });
        samples.apply(pane);
      }
      const selections: Matcher[][] = [
        [matcher("__name__", "=~", "tidemark_(requests|error_ratio|bias_count_pct|bias_p99_pct|latency_ms)")],
        [matcher("__name__", "=~", "tidemark_.*"), matcher("pane_kind", "=", "final")],
        [matcher("pane_kind", "!~", "early|late")],
      ];
      for (const m of selections)
        for (const view of samples.select(m)) {
          const lo = Math.floor(r() * 50);
          const hi = lo + Math.floor(r() * view.length);
          const want: Array<[number, number, number]> = [];
          for (let i = lo; i < Math.min(hi, view.length); i++)
            if (view.present(i)) want.push([view.time(i), view.value(i), i]);
          const size = Math.max(0, Math.min(hi, view.length) - lo);
          const [times, values, rows] = [new Float64Array(size), new Float64Array(size), new Int32Array(size)];
          const n = view.readPresent(lo, Math.min(hi, view.length), times, values, rows);
          const got = Array.from({ length: n }, (_, k) => [times[k], values[k], rows[k]]);
          expect(got).toEqual(want);
        }
    });
  }
});
