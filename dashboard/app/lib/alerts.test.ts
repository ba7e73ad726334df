import { describe, expect, it } from "vitest";
import type { ActiveAlert, AlertsView } from "../../protocol/alerts.js";
import { alertHref, alertLine, alertsOnPanel } from "./alerts.js";

const active = (over: Partial<ActiveAlert>): ActiveAlert => ({
  fingerprint: "f",
  alertname: "HighErrorRate",
  labels: {},
  annotations: { value: "0.2" },
  policy: "alerting",
  windowMs: 10_000,
  service: "checkout",
  panel: "errorRate",
  value: 0.2,
  paneKind: "early",
  threshold: "> 0.05",
  mayFlip: false,
  generatorURL: "http://dash:3000/?range=1h&window=10s&services=checkout&policy.errorRate=alerting#errorRate",
  state: "firing",
  activeAt: 0,
  firedAt: 0,
  ...over,
});

describe("alerts in the app", () => {
  it("marks a panel with the alerts of its panel, policy and window size only", () => {
    const view: AlertsView = {
      active: [active({}), active({ policy: "dashboard" }), active({ windowMs: 60_000 }), active({ panel: "p99" })],
      history: [],
      rules: [],
    };
    expect(alertsOnPanel(view, "errorRate", "alerting", 10_000)).toEqual([active({})]);
    expect(alertsOnPanel(null, "errorRate", "alerting", 10_000)).toEqual([]);
  });

  it("writes an alert as name, service, value against the threshold and pane kind", () => {
    expect(alertLine(active({}))).toBe("HighErrorRate · checkout 0.2 > 0.05 (early pane)");
    expect(alertLine(active({ service: null }))).toBe("HighErrorRate 0.2 > 0.05 (early pane)");
  });

  it("links to the alert's view here, never with a read token in it", () => {
    expect(alertHref(active({}))).toBe("?range=1h&window=10s&services=checkout&policy.errorRate=alerting#errorRate");
    const withToken = active({});
    withToken.generatorURL = withToken.generatorURL.replace("?", "?token=t0k&");
    expect(alertHref(withToken)).toBe("?range=1h&window=10s&services=checkout&policy.errorRate=alerting#errorRate");
  });
});
