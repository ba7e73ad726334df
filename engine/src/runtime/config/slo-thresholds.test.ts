import { describe, expect, it } from "vitest";
import { parseEngineConfig } from "./config.js";
import { parseMergeConfig } from "./merge-config.js";

const slo = (sli: unknown, name = "s"): unknown => ({ name, service: "checkout", objective: 0.999, sli });

describe('latency thresholds from the config file\'s SLOs (docs/semantics.md, "Latency thresholds")', () => {
  it("are the union of the SLOs' latencyAboveMs, ascending, for workers and merge operators alike", () => {
    const file = {
      slos: [slo({ latencyAboveMs: 300 }), slo("errors"), slo({ latencyAboveMs: 100 }), slo({ latencyAboveMs: 300 })],
    };
    expect(parseEngineConfig({ file }).core.latencyThresholdsMs).toEqual([100, 300]);
    expect(parseMergeConfig({ file }).core.latencyThresholdsMs).toEqual([100, 300]);
    expect(parseEngineConfig({ file: {} }).core.latencyThresholdsMs).toEqual([]);
    expect(parseEngineConfig({ file: { slos: [slo("errors")] } }).core.latencyThresholdsMs).toEqual([]);
  });

  it("refuses a threshold that is not a whole number of ms, and more than 8 distinct ones, naming the field", () => {
    const bad = (file: unknown): string => {
      try {
        parseEngineConfig({ file, fileName: "tidemark.config.json" });
      } catch (e) {
        return `${(e as { code: string }).code} ${(e as Error).message}`;
      }
      return "accepted";
    };
    expect(bad({ slos: [slo("errors"), slo({ latencyAboveMs: 2.5 })] })).toBe(
      "TM_ENGINE_BAD_CONFIG tidemark.config.json: slos[1].sli.latencyAboveMs must be a whole number of milliseconds ≥ 1, got 2.5",
    );
    expect(bad({ slos: [slo({ latencyAboveMs: "300" })] })).toMatch(/slos\[0\]\.sli\.latencyAboveMs must be/);
    expect(bad({ slos: {} })).toMatch(/tidemark\.config\.json: slos must be an array/);
    const nine = Array.from({ length: 9 }, (_, i) => slo({ latencyAboveMs: 100 * (i + 1) }, `s${i}`));
    expect(bad({ slos: nine })).toMatch(/at most 8 distinct thresholds over all SLOs/);
  });
});
