/**
 * The range body is written into bytes from one JSON.stringify per chunk of points
 * (docs/prometheus-api.md, "Sizing"); this compares it, on random series, with the straightforward
 * encoding: JSON.stringify of the whole body with every value through formatValue.
 */
import { describe, expect, it } from "vitest";
import { prng } from "../prng.fixture.js";
import { formatValue, type RangeSeries } from "../promql/index.js";
import { matrixBody, matrixData } from "./prom-response.js";

const SPECIAL = [NaN, Infinity, -Infinity, -0, 0, 1e21, -1e21, 1.5e-7, -2.5e-10, 1e300, 5e-324, 2 ** 53, 0.1];

function randomValue(r: () => number): number {
  const k = r();
  if (k < 0.15) return SPECIAL[Math.floor(r() * SPECIAL.length)] as number;
  if (k < 0.4) return Math.floor(r() * 10_000) - 100;
  if (k < 0.7) return Math.floor(r() * 400) / (1 + Math.floor(r() * 900));
  return (r() - 0.5) * 10 ** Math.floor(r() * 30 - 12);
}

function randomSeries(seed: number): RangeSeries[] {
  const r = prng(seed);
  return Array.from({ length: 1 + Math.floor(r() * 6) }, (_, s) => {
    const n = Math.floor(r() * 700); // past a chunk of points, sometimes none
    const times: number[] = [];
    const values: number[] = [];
    let ms = 1_700_000_000_000 + Math.floor(r() * 1000) * (r() < 0.3 ? 1 : 1000);
    for (let i = 0; i < n; i++) {
      times.push(ms);
      values.push(randomValue(r));
      ms += r() < 0.8 ? 15_000 : 1 + Math.floor(r() * 20_000); // fractional seconds too
    }
    return { labels: { __name__: "tidemark_requests", service: `svc-${s}`, route: '/ünï «ç» "q"' }, times, values };
  });
}

/** The straightforward body: every point as [seconds, formatValue(v)], the whole through JSON.stringify. */
function oracle(series: readonly RangeSeries[], warnings: string[]): string {
  const data = {
    resultType: "matrix",
    result: series.map((s) => ({
      metric: s.labels,
      values: s.times.map((t, i) => [t / 1000, formatValue(s.values[i] as number)]),
    })),
  };
  return JSON.stringify({ status: "success", data, ...(warnings.length > 0 ? { warnings } : {}) });
}

describe("the range body written into bytes", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}: is byte for byte the straightforward JSON`, () => {
      const series = randomSeries(seed);
      const warnings = seed % 2 === 0 ? ["dashboard policy: counts under-reported by ≈ 6.4 % for api"] : [];
      expect(matrixBody(series, warnings).toString("utf8")).toBe(oracle(series, warnings));
      expect(JSON.parse(matrixData(series))).toEqual(JSON.parse(oracle(series, [])).data);
    });
  }

  it("writes an empty result", () => {
    expect(matrixBody([], []).toString("utf8")).toBe('{"status":"success","data":{"resultType":"matrix","result":[]}}');
  });
});
