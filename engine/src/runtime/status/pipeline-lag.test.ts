import { describe, expect, it } from "vitest";
import { EngineMetrics } from "./engine-metrics.js";
import { LAG_BUCKETS_S, PipelineLag } from "./pipeline-lag.js";

const T = 1_767_225_600_000;

describe("PipelineLag", () => {
  it("weights each observation by its items, in the Prometheus buckets and the minute's percentiles", () => {
    const lag = new PipelineLag();
    lag.observe(T + 5, T, 98); // 5 ms, 98 events
    lag.observe(T + 1_000 + 200, T + 1_000, 1); // 200 ms, one item
    lag.observe(T + 2_000 + 3_000, T + 2_000, 1); // 3 s, one item
    expect(lag.count).toBe(100);
    expect(lag.sumSeconds).toBeCloseTo(98 * 0.005 + 0.2 + 3, 9);
    expect(lag.counts[0]).toBe(98); // ≤ 10 ms
    expect(lag.counts[LAG_BUCKETS_S.indexOf(0.25)]).toBe(1);
    expect(lag.counts[LAG_BUCKETS_S.indexOf(5)]).toBe(1);
    const p = lag.percentiles(T + 5_000);
    // p50 within the 5 ms items, p99 the 200 ms one (rank 99 of 100), each within 5 % above.
    expect(p.p50).toBeGreaterThanOrEqual(5);
    expect(p.p50).toBeLessThanOrEqual(5 * 1.05);
    expect(p.p99).toBeGreaterThanOrEqual(200);
    expect(p.p99).toBeLessThanOrEqual(200 * 1.05);
  });

  it("forgets what is older than a minute of wall clock, and says null when nothing is left", () => {
    const lag = new PipelineLag();
    lag.observe(T, T - 2_000, 10);
    lag.observe(T + 30_000, T + 30_000 - 40, 10);
    expect(lag.percentiles(T + 30_000).p99).toBeGreaterThanOrEqual(2_000);
    expect(lag.percentiles(T + 60_000).p99).toBeLessThan(50); // the 2 s items aged out
    expect(lag.percentiles(T + 95_000)).toEqual({ p50: null, p99: null });
    // A slot reused a minute later holds only the new second.
    lag.observe(T + 120_000, T + 120_000 - 7, 1);
    expect(lag.percentiles(T + 120_000).p99).toBeLessThan(7.5);
  });

  it("is exported as a Prometheus histogram, cumulative buckets with the worker label", async () => {
    const lag = new PipelineLag();
    lag.observe(T + 40, T, 3);
    lag.observe(T + 400, T, 1);
    const metrics = new EngineMetrics(
      {
        eventsTotal: () => 4,
        panesEmitted: () => new Map(),
        status: () =>
          ({
            policies: [],
            partitions: [],
            logTime: null,
            stateKeys: 0,
            stateBytes: 0,
            overflow: { services: 0, routes: 0 },
          }) as never,
        partitions: () => [0],
        pipelineLag: () => lag,
      },
      { worker: "w" },
    );
    const text = await metrics.registry.metrics();
    const line = (suffix: string): string | undefined =>
      text.split("\n").find((l) => l.startsWith(`tidemark_engine_pipeline_lag_seconds${suffix}`));
    expect(text).toContain("# TYPE tidemark_engine_pipeline_lag_seconds histogram");
    expect(line('_bucket{le="0.025"')).toBe('tidemark_engine_pipeline_lag_seconds_bucket{le="0.025",worker="w"} 0');
    expect(line('_bucket{le="0.05"')).toBe('tidemark_engine_pipeline_lag_seconds_bucket{le="0.05",worker="w"} 3');
    expect(line('_bucket{le="0.5"')).toBe('tidemark_engine_pipeline_lag_seconds_bucket{le="0.5",worker="w"} 4');
    expect(line('_bucket{le="+Inf"')).toBe('tidemark_engine_pipeline_lag_seconds_bucket{le="+Inf",worker="w"} 4');
    expect(line("_count")).toBe('tidemark_engine_pipeline_lag_seconds_count{worker="w"} 4');
    expect(Number(line("_sum")?.split(" ")[1])).toBeCloseTo(0.52, 9);
  });
});
