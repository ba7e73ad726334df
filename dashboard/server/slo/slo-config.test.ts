import { describe, expect, it } from "vitest";
import { latencyThresholds, parseSlos, WORKBOOK_TIERS } from "./slo-config.js";

const scope = { policies: ["alerting", "accurate"], windowsMs: [10_000, 60_000] };
const parse = (raw: unknown): ReturnType<typeof parseSlos> => parseSlos(raw, scope, "tidemark.config.json");
const base = { name: "checkout-availability", service: "checkout", objective: 0.999, period: "30d", sli: "errors" };

describe("the slos section", () => {
  it("takes the workbook's four tiers by default, on the smallest window dividing them", () => {
    const [s] = parse([{ ...base, policy: "alerting", minRequestsPerHour: 100 }]);
    expect(s?.tiers).toEqual(WORKBOOK_TIERS);
    expect(s?.tiers.map((t) => [t.severity, t.longMs / 60_000, t.shortMs / 60_000, t.factor])).toEqual([
      ["page", 60, 5, 14.4],
      ["page", 360, 30, 6],
      ["ticket", 1440, 120, 3],
      ["ticket", 4320, 360, 1],
    ]);
    expect([s?.paneMs, s?.periodMs, s?.policy, s?.minRequestsPerHour]).toEqual([
      10_000,
      30 * 86_400_000,
      "alerting",
      100,
    ]);
  });

  it("reads tiers, labels and annotations in the Prometheus rule shape; service defaults to all services", () => {
    const [s] = parse([
      {
        name: "all",
        objective: 0.99,
        tiers: [{ severity: "page", long: "1h", short: "5m", factor: 10 }],
        labels: { team: "pay" },
        annotations: { runbook: "https://x" },
      },
    ]);
    expect([s?.service, s?.tiers, s?.labels, s?.annotations]).toEqual([
      "*",
      [{ severity: "page", longMs: 3_600_000, shortMs: 300_000, factor: 10 }],
      { team: "pay" },
      { runbook: "https://x" },
    ]);
  });

  it.each([
    [{ ...base, objective: 99.9 }, /\$\.slos\[0\] \("checkout-availability"\)\.objective must be a fraction/],
    [{ ...base, period: "a month" }, /\.period must be a duration/],
    [{ ...base, policy: "fast" }, /\.policy must name one of the config's policies \(alerting, accurate\)/],
    [{ ...base, sli: "latency" }, /\("checkout-availability"\)\.sli must be "errors" or \{ "latencyAboveMs": 300 \}/],
    [{ ...base, sli: { latencyAboveMs: 0 } }, /\.sli\.latencyAboveMs must be a whole number of milliseconds > 0/],
    [{ ...base, sli: { latencyAboveMs: 2.5 } }, /\.sli\.latencyAboveMs must be a whole number of milliseconds > 0/],
    [{ ...base, sli: { latencyAboveMs: "300" } }, /\.sli\.latencyAboveMs must be a whole number/],
    [{ ...base, sli: { latencyBelowMs: 300 } }, /\.sli\.latencyBelowMs is not a known key: use one of latencyAboveMs/],
    [{ ...base, minRequestsPerHour: -1 }, /\.minRequestsPerHour must be a number of requests/],
    [{ ...base, tiers: [] }, /\.tiers must hold at least one tier/],
    [
      { ...base, tiers: [{ severity: "warn", long: "1h", short: "5m", factor: 1 }] },
      /\.tiers\[0\]\.severity must be "page" or "ticket"/,
    ],
    [
      { ...base, tiers: [{ severity: "page", long: "5m", short: "1h", factor: 1 }] },
      /\.tiers\[0\]\.short must be shorter than long/,
    ],
    [
      { ...base, tiers: [{ severity: "page", long: "1h", short: "5m", factor: 0 }] },
      /\.tiers\[0\]\.factor must be a burn rate > 0/,
    ],
    [
      { ...base, tiers: [{ severity: "page", long: "1h", short: "15s", factor: 2 }] },
      /\.tiers need a window size of the config \(10s, 1m\)/,
    ],
    [{ ...base, labels: { severity: "x" } }, /\.labels\.severity is set by tidemark/],
    [{ ...base, annotations: { budget_remaining: "x" } }, /\.annotations\.budget_remaining is set by tidemark/],
    [{ ...base, window: "1m" }, /\$\.slos\[0\]\.window is not a known key/],
    [{ ...base, name: "has space" }, /\$\.slos\[0\]\.name must be a name/],
  ])("names the SLO and the field: %j", (raw, message) => {
    expect(() => parse([raw])).toThrow(message);
    try {
      parse([raw]);
    } catch (err) {
      expect((err as { code: string }).code).toBe("TM_CONFIG_INVALID");
    }
  });

  it("takes a latency SLI, and at most 8 distinct thresholds over all SLOs", () => {
    const ms = [100, 200, 300, 400, 500, 600, 700, 800];
    const slos = parse([
      ...ms.map((m, i) => ({ ...base, name: `l${i}`, sli: { latencyAboveMs: m } })),
      { ...base, name: "again", sli: { latencyAboveMs: 300 } },
    ]);
    expect(slos.map((s) => s.sli)).toEqual([...ms, 300].map((m) => ({ latencyAboveMs: m })));
    expect(latencyThresholds(slos)).toEqual(ms);
    expect(() =>
      parse([
        ...slos.map((s) => ({ ...base, name: s.name, sli: s.sli })),
        { ...base, name: "ninth", sli: { latencyAboveMs: 900 } },
      ]),
    ).toThrow(
      /\$\.slos\[9\] \("ninth"\)\.sli\.latencyAboveMs is the 9th distinct latency threshold \(100, 200, 300, 400, 500, 600, 700, 800, 900 ms\): at most 8/,
    );
  });

  it("settles a window on the policy's final pane, or on its on-time pane when it has none (grace 0)", () => {
    const defaults = { policies: ["dashboard", "alerting", "billing"], windowsMs: [10_000, 60_000] };
    const settled = (policy: string, policies?: unknown) =>
      parseSlos([{ ...base, policy }], defaults, "x", policies)[0]?.settledBy;
    expect([settled("dashboard"), settled("alerting"), settled("billing")]).toEqual(["on-time", "final", "final"]);
    const mine = [
      { name: "dashboard", watermark: { kind: "arrival-lag", lag: "2s" }, grace: "5s" },
      { name: "alerting", watermark: { kind: "arrival-lag", lag: "10s" }, grace: "0s" },
    ];
    expect([settled("dashboard", mine), settled("alerting", mine)]).toEqual(["final", "on-time"]);
  });

  it("rejects a non-list, duplicate names, and too many SLOs", () => {
    expect(() => parse({})).toThrow(/\$\.slos must be a list of SLOs/);
    expect(() => parse([base, base])).toThrow(/\$\.slos\[1\]\.name "checkout-availability" is used twice/);
    expect(() => parse(Array.from({ length: 101 }, (_, i) => ({ ...base, name: `s${i}` })))).toThrow(/at most 100/);
    expect(parse(undefined)).toEqual([]);
  });
});
