import { describe, expect, it } from "vitest";
import type { PaneBias } from "@tidemark/engine/protocol";
import { parsePromql } from "../promql/index.js";
import { generatorUrl, panelOf } from "./alert-link.js";
import { mayFlip } from "./alert-text.js";
import { biasText } from "./bias-text.js";
import { ruleShape } from "./rule-shape.js";

const SCOPE = { policies: ["dashboard", "alerting", "billing"], windowsMs: [10_000, 60_000] };
const shape = (expr: string) => ruleShape(parsePromql(expr), SCOPE);
const bias = (over: Partial<PaneBias>): PaneBias => ({
  countPct: null,
  errorRatePp: null,
  p99Pct: null,
  usersPct: null,
  windows: 30,
  ...over,
});
const ratio = shape('tidemark_error_ratio{policy="alerting", window="10s"} > 0.05');

describe("the bias annotation", () => {
  it("writes the figure signed policy − reference in the metric's unit, with its interval, kind and scope", () => {
    const b = bias({ errorRatePp: -1.4, spread: { countPct: null, errorRatePp: 0.3, p99Pct: null, usersPct: null } });
    expect(biasText({ ...b, stage: "on-time", scope: "service" }, "errorRatePp")).toBe(
      "error ratio \u22121.4 \u00b1 0.3 pp, 30 win., measured on on-time panes for this service",
    );
    expect(biasText({ ...b, stage: "early", age: "0.25-0.5", scope: "policy" }, "errorRatePp")).toBe(
      "error ratio \u22121.4 \u00b1 0.3 pp, 30 win., measured on early panes (age 0.25-0.5) policy-wide (this service has no sample yet)",
    );
    // countPct is a shortfall: an under-count shows negative, as in the app.
    expect(biasText(bias({ countPct: 2.5, windows: 1 }), "countPct")).toBe("count \u22122.5 %, 1 win.");
  });

  it("says provisional (a lower bound), not measured yet, or not measured for this metric", () => {
    expect(biasText(bias({ errorRatePp: 0.8, windows: 3, provisional: true }), "errorRatePp")).toBe(
      "error ratio \u2265 0.8 pp over so far (provisional, 3 win.)",
    );
    expect(biasText(bias({ windows: 0 }), "errorRatePp")).toBe("error ratio: not measured yet");
    expect(biasText(bias({ errorRatePp: 1 }), undefined)).toBe("not measured for this metric");
  });
});

describe("may flip", () => {
  const spread = (errorRatePp: number) => ({ countPct: null, errorRatePp, p99Pct: null, usersPct: null });

  it("holds when the value moved by |bias| + its half-width, either way, lies on both sides of the threshold", () => {
    const b = bias({ errorRatePp: -1.4, spread: spread(0.3) });
    expect(mayFlip(ratio, { value: 0.066, bias: b })).toMatch(/^may flip: bias \u22121\.4 \u00b1 0\.3 pp/);
    expect(mayFlip(ratio, { value: 0.068, bias: b })).toBeNull(); // 0.068 − 0.017 = 0.051: stays above
    expect(mayFlip(ratio, { value: 0.04, bias: b })).not.toBeNull(); // below, may be above
    expect(mayFlip(ratio, { value: 0.2, bias: bias({ errorRatePp: null }) })).toBeNull();
  });

  it("reads % biases relative to the value, and only for values in the metric's unit", () => {
    const p99 = shape('tidemark_latency_ms{policy="alerting", window="10s", quantile="0.99"} > 500');
    const b = bias({ p99Pct: 8, spread: { countPct: null, errorRatePp: null, p99Pct: 2, usersPct: null } });
    expect(mayFlip(p99, { value: 520, bias: b })).toBe(
      "may flip: bias +8 \u00b1 2 % (520 \u00b1 52 lies on both sides of 500)",
    );
    expect(mayFlip(p99, { value: 600, bias: b })).toBeNull();
    const summed = shape('sum(tidemark_error_ratio{policy="alerting", window="10s"}) > 0.05');
    expect(summed.plain).toBe(false);
    expect(mayFlip(summed, { value: 0.051, bias: bias({ errorRatePp: -5 }) })).toBeNull();
  });
});

describe("where an alert links to", () => {
  it("opens the metric's panel under the rule's policy, window and service", () => {
    expect(panelOf(ratio)).toBe("errorRate");
    expect(panelOf(shape('tidemark_latency_ms{policy="alerting", window="60s", quantile="0.95"} > 1'))).toBe("p95");
    expect(panelOf(shape('tidemark_bias_count_pct{policy="alerting", window="10s"} > 1'))).toBeNull();
    expect(generatorUrl("http://dash:3000/", ratio, "check out")).toBe(
      "http://dash:3000/?range=1h&window=10s&services=check+out&policy.errorRate=alerting#errorRate",
    );
    expect(
      generatorUrl(
        "http://dash:3000",
        shape('tidemark_emit_delay_seconds{policy="alerting", window="60s"} > 60'),
        null,
      ),
    ).toBe("http://dash:3000/?range=1h&window=60s");
  });
});
