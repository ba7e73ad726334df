import { describe, expect, it } from "vitest";
import { DEFAULT_POLICIES, defaultCoreConfig } from "./default-config.js";
import { ConfigError } from "./errors.js";
import { validateCoreConfig } from "./validate-config.js";

function error(input: unknown): ConfigError {
  try {
    validateCoreConfig(input);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

describe("validateCoreConfig", () => {
  it("fills defaults: the design's three policies, 10 s and 60 s windows, 8 partitions, 5 min reference", () => {
    const c = validateCoreConfig({});
    expect(c).toEqual(defaultCoreConfig());
    expect(c.policies.map((p) => [p.name, p.watermark, p.graceMs, p.earlyEveryMs, p.lateEveryMs, p.mode])).toEqual([
      ["dashboard", { kind: "arrival-lag", lagMs: 2000 }, 0, 1000, null, "accumulating"],
      ["alerting", { kind: "arrival-lag", lagMs: 10_000 }, 30_000, 5000, 1000, "retracting"],
      ["billing", { kind: "arrival-lag", lagMs: 10_000 }, 90_000, null, null, "final-only"],
    ]);
    expect(Object.isFrozen(c.policies[0]?.watermark)).toBe(true);
    expect(DEFAULT_POLICIES).toHaveLength(3);
  });

  it("reads durations as strings or milliseconds", () => {
    const c = validateCoreConfig({
      windows: ["30s", 5000, { kind: "sliding", size: "1m", slide: "20s" }],
      policies: [{ name: "fast_1", watermark: { kind: "arrival-lag", lag: "500ms" }, grace: 2000, earlyEvery: "1s" }],
      referenceHorizon: "10m",
    });
    expect(c.windows).toEqual([
      { kind: "tumbling", sizeMs: 30_000 },
      { kind: "tumbling", sizeMs: 5000 },
      { kind: "sliding", sizeMs: 60_000, slideMs: 20_000 },
    ]);
    expect(c.policies[0]).toMatchObject({
      watermark: { lagMs: 500 },
      graceMs: 2000,
      earlyEveryMs: 1000,
      lateEveryMs: null,
    });
    expect(c.referenceHorizonMs).toBe(600_000);
  });

  it("raises the reference horizon to the largest lag + grace", () => {
    const c = validateCoreConfig({
      policies: [{ name: "slow", watermark: { kind: "arrival-lag", lag: "5m" }, grace: "2m" }],
    });
    expect(c.referenceHorizonMs).toBe(420_000);
  });

  it("names the path of the bad field and what is allowed", () => {
    expect(error({ policies: [{ name: "Bad Name", watermark: { kind: "arrival-lag" } }] }).message).toMatch(
      /^config\.policies\[0\]\.name: expected a name of \[a-z0-9_-\]\+/,
    );
    expect(error({ policies: [{ name: "x", watermark: { kind: "arrival-lag", lag: "ten" } }] }).path).toBe(
      "config.policies[0].watermark.lag",
    );
    expect(error({ policies: [{ name: "x", watermark: { kind: "nope" } }] }).message).toMatch(
      /watermark\.kind: expected one of arrival-lag, bounded, percentile, perfect/,
    );
    expect(error({ policies: [{ name: "x", watermark: { kind: "percentile", q: 2 } }] }).path).toBe(
      "config.policies[0].watermark.q",
    );
    expect(error({ policies: [{ name: "x", watermark: { kind: "bounded", lag: 1 }, mode: "sum" }] }).path).toBe(
      "config.policies[0].mode",
    );
    expect(error({ windows: ["10s", 10_000] }).message).toMatch(/config\.windows\[1\]: duplicate window size 10000/);
    expect(error({ windows: [{ kind: "sliding", size: "10s", slide: "20s" }] }).path).toBe("config.windows[0].slide");
    expect(error({ partitions: 0 }).message).toMatch(/config\.partitions: expected a whole number from 1/);
    expect(error({ policies: [] }).path).toBe("config.policies");
    expect(
      error({
        policies: [
          { name: "a", watermark: { kind: "perfect" } },
          { name: "a", watermark: { kind: "perfect" } },
        ],
      }).path,
    ).toBe("config.policies[1]");
    expect(error("x").code).toBe("TM_CONFIG_INVALID");
  });

  it("reads the service cap (default 2000, a whole number from 1 to 1 000 000)", () => {
    expect(validateCoreConfig({}).serviceCap).toBe(2000);
    expect(validateCoreConfig({ serviceCap: 5 }).serviceCap).toBe(5);
    expect(error({ serviceCap: 0 }).message).toBe(
      "config.serviceCap: expected a whole number from 1 to 1000000, got 0",
    );
    expect(error({ serviceCap: 2.5 }).path).toBe("config.serviceCap");
  });

  it("reads the idle timeout (log time, default 10 s) like the other durations; it must be greater than 0", () => {
    expect(validateCoreConfig({}).idleTimeoutMs).toBe(10_000);
    expect(validateCoreConfig({ idleTimeout: "30s" }).idleTimeoutMs).toBe(30_000);
    expect(validateCoreConfig({ idleTimeoutMs: 2500 }).idleTimeoutMs).toBe(2500);
    expect(error({ idleTimeout: 0 }).message).toBe("config.idleTimeout: must be greater than 0, got 0");
    expect(error({ idleTimeout: "soon" }).path).toBe("config.idleTimeout");
  });

  it("reads latency thresholds: positive whole ms, ascending, each once, at most 8 (default none)", () => {
    expect(validateCoreConfig({}).latencyThresholdsMs).toEqual([]);
    expect(validateCoreConfig({ latencyThresholdsMs: [100, 300] }).latencyThresholdsMs).toEqual([100, 300]);
    expect(error({ latencyThresholdsMs: [300, 100] }).message).toBe(
      "config.latencyThresholdsMs[1]: expected thresholds in ascending order, each once; got 100 after 300",
    );
    expect(error({ latencyThresholdsMs: [100, 100] }).path).toBe("config.latencyThresholdsMs[1]");
    expect(error({ latencyThresholdsMs: [0] }).path).toBe("config.latencyThresholdsMs[0]");
    expect(error({ latencyThresholdsMs: [2.5] }).path).toBe("config.latencyThresholdsMs[0]");
    expect(error({ latencyThresholdsMs: "300" }).path).toBe("config.latencyThresholdsMs");
    expect(error({ latencyThresholdsMs: [1, 2, 3, 4, 5, 6, 7, 8, 9] }).message).toMatch(
      /^config\.latencyThresholdsMs: expected an array of at most 8 thresholds in ms/,
    );
  });
});
