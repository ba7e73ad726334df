import { describe, expect, it } from "vitest";
import type { Pane, PaneBias } from "@tidemark/engine/protocol";
import { testPane, type PaneSpec } from "../../protocol/pane.fixture.js";
import { parseAlerts, scopeOf } from "../alerts/alerts-config.js";
import { PaneSamples } from "../prom/pane-samples.js";
import { AlertBook } from "./alert-book.js";
import type { AlertListener, AlertNotice } from "./rule-run.js";

const W = 10_000;
const T = 1_700_000_000_000;
const MEASURED: PaneBias = {
  countPct: 2,
  errorRatePp: -1.4,
  p99Pct: 3,
  usersPct: null,
  windows: 30,
  spread: { countPct: 0.5, errorRatePp: 0.3, p99Pct: 1, usersPct: null },
  stage: "on-time",
  scope: "service",
  provisional: false,
};

type Event = [string, string, AlertNotice, string?];

/** A book with the given rules over real pane series; `offer` feeds a pane to both and flushes. */
function rig(rules: unknown[]) {
  const config = parseAlerts({ rules }, scopeOf({}, "config"), "config");
  const events: Event[] = [];
  const listener: AlertListener = {
    fired: (n) => events.push(["fired", n.labels["service"] ?? "", n]),
    updated: (n) => events.push(["updated", n.labels["service"] ?? "", n]),
    ended: (n, how, _endsAt, reason) => events.push([how, n.labels["service"] ?? "", n, reason]),
  };
  const samples = new PaneSamples({ windowsPerSeries: 1000, maxWindows: 100_000, discardingPolicies: [] });
  const book = new AlertBook(config.rules, { dashboardUrl: "http://dash:3000", historySize: 50 }, listener);
  return {
    book,
    events,
    /** Events other than annotation updates, as [what, service]. */
    seen: () => events.filter(([e]) => e !== "updated").map(([e, s]) => [e, s]),
    offer(...panes: Pane[]) {
      for (const p of panes) {
        samples.apply(p);
        book.offer(p);
      }
      book.flush(samples);
    },
  };
}

/** A pane of the alerting policy: window `n` (start T + n·W), errors out of 100 requests. */
function p(n: number, errors: number, s: PaneSpec = {}): Pane {
  return testPane({ policy: "alerting", service: "checkout", start: T + n * W, count: 100, errors, ...s });
}

const RATIO = { alert: "HighErrorRate", expr: 'tidemark_error_ratio{policy="alerting",window="10s"} > 0.05' };

describe("AlertBook: rules evaluated on pane updates", () => {
  it("alerts for the failing service only, with its labels, value, threshold, kind, bias and emit delay", () => {
    const r = rig([
      { ...RATIO, labels: { severity: "page" }, annotations: { summary: "{{ $labels.service }} fails" } },
    ]);
    r.offer(p(0, 20, { bias: MEASURED, emitDelayMs: 10_000 }), p(0, 1, { service: "cart", bias: MEASURED }));
    expect(r.seen()).toEqual([["fired", "checkout"]]);
    const n = (r.events[0] as Event)[2];
    expect(n.labels).toEqual({
      alertname: "HighErrorRate",
      policy: "alerting",
      window: "10s",
      service: "checkout",
      severity: "page",
    });
    expect(n.annotations).toMatchObject({
      summary: "checkout fails",
      value: "0.2",
      threshold: "> 0.05",
      pane_kind: "on-time",
      window_start: new Date(T).toISOString(),
      bias: "error ratio \u22121.4 \u00b1 0.3 pp, 30 win., measured on on-time panes for this service",
      emit_delay: "10 s after the window's end (log time) + 35 ms pipeline",
    });
    expect(n.annotations["may_flip"]).toBeUndefined();
    expect(n.startsAt).toBe(T + W + 2000);
    expect(n.generatorURL).toBe(
      "http://dash:3000/?range=1h&window=10s&services=checkout&policy.errorRate=alerting#errorRate",
    );
    expect(r.book.view().active.map((a) => [a.state, a.service, a.value])).toEqual([["firing", "checkout", 0.2]]);
  });

  it("says may flip when the value moved by the bias and its interval lies on both sides of the threshold", () => {
    const r = rig([RATIO]);
    r.offer(p(0, 6, { bias: MEASURED }));
    // 0.06 ± (1.4 + 0.3) pp = 0.043 … 0.077: both sides of 0.05.
    expect((r.events[0] as Event)[2].annotations["may_flip"]).toBe(
      "may flip: bias \u22121.4 \u00b1 0.3 pp (0.06 \u00b1 0.017 lies on both sides of 0.05)",
    );
    expect(r.book.view().active[0]?.mayFlip).toBe(true);
  });

  it("retracts an alert raised on an early pane when the on-time pane does not cross, and counts it", () => {
    const r = rig([RATIO]);
    r.offer(p(0, 12, { kind: "early", seq: 0, emittedAt: T + 5000 }));
    expect(r.seen()).toEqual([["fired", "checkout"]]);
    expect((r.events[0] as Event)[2].annotations["pane_kind"]).toBe("early");
    r.offer(p(0, 3, { kind: "on-time", seq: 1 }));
    expect(r.seen()).toEqual([
      ["fired", "checkout"],
      ["retracted", "checkout"],
    ]);
    const [, , ended, reason] = r.events.at(-1) as Event;
    expect(reason).toBe(
      `retracted: raised on the early pane of the window ending ${new Date(T + W).toISOString().replace(".000Z", "Z")} ` +
        "(0.12 > 0.05); the on-time pane of the window ending " +
        `${new Date(T + W).toISOString().replace(".000Z", "Z")} shows 0.03, which does not cross it`,
    );
    expect(ended.annotations["retracted"]).toBe(reason);
    const view = r.book.view();
    expect(view.active).toEqual([]);
    expect(view.history.map((h) => h.event)).toEqual(["retracted", "fired"]);
    expect(view.rules).toEqual([
      { alertname: "HighErrorRate", fired: 1, retracted: 1, resolved: 0, firing: 0, pending: 0 },
    ]);
  });

  it("judges a retracting policy's window by the pane that replaces the retract, not by the retract", () => {
    const r = rig([RATIO]);
    r.offer(p(0, 12, { kind: "early", seq: 0 }));
    r.offer(p(0, 12, { kind: "retract", seq: 1 })); // withdraws seq 0: no sample, nothing ends
    expect(r.seen()).toEqual([["fired", "checkout"]]);
    r.offer(p(0, 4, { kind: "early", seq: 2 })); // an early pane below does not end it
    r.offer(p(0, 4, { kind: "retract", seq: 3 }));
    expect(r.book.view().active).toHaveLength(1);
    r.offer(p(0, 4, { kind: "on-time", seq: 4 }));
    expect(r.seen()).toEqual([
      ["fired", "checkout"],
      ["retracted", "checkout"],
    ]);
  });

  it("resolves (not retracts) when a settled window crossed and a newer settled window does not", () => {
    const r = rig([RATIO]);
    r.offer(p(0, 12), p(1, 9, { kind: "early" }));
    r.offer(p(1, 2, { seq: 1 }));
    expect(r.seen()).toEqual([
      ["fired", "checkout"],
      ["resolved", "checkout"],
    ]);
    expect(r.events.at(-1)?.[3]).toMatch(
      /^resolved: the on-time pane of the window ending .* shows 0\.02, not > 0\.05$/,
    );
  });

  it("waits `for` in window time: pending, then firing on the window that completes it", () => {
    const r = rig([{ ...RATIO, for: "20s" }]);
    r.offer(p(0, 12));
    expect(r.book.view().active.map((a) => a.state)).toEqual(["pending"]);
    expect(r.book.view().rules[0]?.pending).toBe(1);
    r.offer(p(1, 12));
    expect(r.seen()).toEqual([]);
    r.offer(p(2, 12));
    expect(r.seen()).toEqual([["fired", "checkout"]]);
    expect(r.book.view().active[0]).toMatchObject({
      state: "firing",
      activeAt: T + W + 2000,
      firedAt: T + 3 * W + 2000,
    });
  });

  it("sends a firing alert's newer value as an update", () => {
    const r = rig([RATIO]);
    r.offer(p(0, 12), p(1, 30));
    expect(r.events.map(([e]) => e)).toEqual(["fired", "updated"]);
    expect(r.events[1]?.[2].annotations["value"]).toBe("0.3");
  });

  it("resolves an alert whose series went silent for 5 minutes of window time", () => {
    const r = rig([RATIO]);
    r.offer(p(0, 12));
    r.offer(p(29, 0, { service: "cart" }));
    expect(r.seen()).toEqual([["fired", "checkout"]]);
    r.offer(p(31, 0, { service: "cart" }));
    expect(r.seen()).toEqual([
      ["fired", "checkout"],
      ["resolved", "checkout"],
    ]);
    expect(r.events.at(-1)?.[3]).toBe("resolved: no pane of this series for 5 m of window time");
  });

  it("reads only the panes of the rule's policy and window size", () => {
    const r = rig([RATIO]);
    r.offer(p(0, 50, { policy: "dashboard" }), p(0, 50, { windowMs: 60_000 }));
    expect(r.events).toEqual([]);
  });

  it("alerts on the all-services series through tidemark_all_*; service and route rules and sums never read them", () => {
    const panes = [
      p(0, 20),
      p(0, 1, { service: "cart" }),
      p(0, 40, { service: "*", count: 200 }),
      p(0, 90, { route: "/pay" }),
    ];
    const perService = rig([RATIO]);
    perService.offer(...panes);
    expect(perService.seen()).toEqual([["fired", "checkout"]]);
    expect(perService.events[0]?.[2].labels).not.toHaveProperty("route");
    const all = rig([{ alert: "AllErrors", expr: 'tidemark_all_error_ratio{policy="alerting",window="10s"} > 0.15' }]);
    all.offer(...panes);
    expect(all.seen()).toEqual([["fired", ""]]);
    expect(all.events[0]?.[2].labels).not.toHaveProperty("service");
    // Both rules on one scope: each alert states the panes of its own level (here their emit delays).
    const both = rig([
      RATIO,
      { alert: "AllErrors", expr: 'tidemark_all_error_ratio{policy="alerting",window="10s"} > 0.15' },
    ]);
    both.offer(...panes.map((x) => (x.key.service === "*" ? { ...x, emitDelayMs: 1000 } : x)));
    expect(both.seen().sort()).toEqual([
      ["fired", ""],
      ["fired", "checkout"],
    ]);
    const delay = (service: string) => both.events.find(([, s]) => s === service)?.[2].annotations["emit_delay"];
    expect(delay("")).toMatch(/^1 s after/);
    expect(delay("checkout")).toMatch(/^2 s after/);
    const route = rig([
      { alert: "RouteErrors", expr: 'tidemark_route_error_ratio{policy="alerting",window="10s"} > 0.5' },
    ]);
    route.offer(...panes);
    expect(route.seen()).toEqual([["fired", "checkout"]]);
    expect(route.events[0]?.[2].labels).toMatchObject({ route: "/pay" });
    // 21 errors of the services' 200 requests: under 0.15, whatever the "*" pane (40 of 200) or the route (90 of 100) say.
    const sum = rig([
      {
        alert: "SumErrors",
        expr: 'sum(tidemark_errors{policy="alerting",window="10s"}) / sum(tidemark_requests{policy="alerting",window="10s"}) > 0.15',
      },
    ]);
    sum.offer(...panes);
    expect(sum.events).toEqual([]);
  });
});
