import { describe, expect, it } from "vitest";
import type { Pane, PaneNowcast } from "@tidemark/engine/protocol";
import { testPane, type PaneSpec } from "../../protocol/pane.fixture.js";
import { parseAlerts, scopeOf } from "../alerts/alerts-config.js";
import { PaneSamples } from "../prom/pane-samples.js";
import { AlertBook } from "./alert-book.js";
import type { AlertNotice } from "./rule-run.js";

const W = 10_000;
const T = 1_700_000_000_000;
const RULE = { alert: "HighErrorRate", expr: 'tidemark_error_ratio{policy="alerting",window="10s"} > 0.2' };

function rig(rules: unknown[] = [RULE]) {
  const config = parseAlerts({ rules }, scopeOf({}, "config"), "config");
  const events: Array<[string, AlertNotice]> = [];
  const samples = new PaneSamples({ windowsPerSeries: 1000, maxWindows: 100_000, discardingPolicies: [] });
  const book = new AlertBook(
    config.rules,
    { dashboardUrl: "http://dash", historySize: 50 },
    {
      fired: (n) => events.push(["fired", n]),
      updated: () => undefined,
      ended: (n, how) => events.push([how, n]),
    },
  );
  return {
    events,
    seen: () => events.map(([e, n]) => `${e} ${n.labels["service"]}`),
    offer(...panes: Pane[]) {
      for (const x of panes) {
        samples.apply(x);
        book.offer(x);
      }
      book.flush(samples);
    },
  };
}

const nowcast = (errorRate: number, spread: number | null): PaneNowcast => ({
  value: { count: 100, errorRate, p99: 1, users: 1 },
  spread: { count: null, errorRate: spread, p99: null, users: null },
  error: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 30 },
});
/** An early pane of window n: `errors` of 100 so far, and its nowcast when measured. */
function early(service: string, n: number, errors: number, nc?: PaneNowcast, s: PaneSpec = {}): Pane {
  const pane = testPane({
    policy: "alerting",
    service,
    start: T + n * W,
    count: 100,
    errors,
    kind: "early",
    seq: 0,
    ...s,
  });
  return nc ? { ...pane, nowcast: nc } : pane;
}
const onTime = (service: string, n: number, errors: number): Pane =>
  testPane({ policy: "alerting", service, start: T + n * W, count: 100, errors, kind: "on-time", seq: 1 });

describe("early panes judged on their nowcast", () => {
  it("a systematically high early pane does not page once its bias is measured; a true crossing still does", () => {
    const r = rig();
    // slow: errors on time, successes late — the early pane reads 30 %, the nowcast 15 % ± 1 pp.
    // real: the early pane reads 50 %, the nowcast 35 % ± 1 pp: it truly crosses 20 %.
    r.offer(early("slow", 0, 30, nowcast(0.15, 0.01)), early("real", 0, 50, nowcast(0.35, 0.01)));
    expect(r.seen()).toEqual(["fired real"]);
    const a = r.events[0]?.[1].annotations;
    expect(a?.["value"]).toBe("0.5");
    expect(a?.["nowcast"]).toMatch(/^0\.35 ± 0\.01 \(the early pane corrected/);
    expect(a?.["may_flip"]).toBeUndefined();
    expect(a?.["provisional"]).toBeUndefined();
    // The settled panes agree with the nowcasts: nothing more happens to slow; real stays firing.
    r.offer(onTime("slow", 0, 15), onTime("real", 0, 35));
    expect(r.seen()).toEqual(["fired real"]);
  });

  it("says may_flip when the nowcast's interval straddles the threshold", () => {
    const r = rig();
    r.offer(early("edge", 0, 40, nowcast(0.21, 0.02)));
    expect(r.seen()).toEqual(["fired edge"]);
    expect(r.events[0]?.[1].annotations["may_flip"]).toBe("may flip: nowcast 0.21 ± 0.02 lies on both sides of 0.2");
  });

  it("before the bias is measured the raw early value fires, marked provisional, and the on-time pane retracts it", () => {
    const r = rig();
    r.offer(early("slow", 0, 30));
    expect(r.seen()).toEqual(["fired slow"]);
    expect(r.events[0]?.[1].annotations["provisional"]).toMatch(/^early pane judged on its raw value/);
    r.offer(onTime("slow", 0, 15));
    expect(r.seen()).toEqual(["fired slow", "retracted slow"]);
  });

  it("a rule over several panes (a range function) judges the raw value, not provisional", () => {
    const r = rig([
      { alert: "MaxErrors", expr: 'max_over_time(tidemark_error_ratio{policy="alerting",window="10s"}[30s]) > 0.2' },
    ]);
    r.offer(early("slow", 0, 30, nowcast(0.15, 0.01)));
    expect(r.seen()).toEqual(["fired slow"]);
    expect(r.events[0]?.[1].annotations["provisional"]).toBeUndefined();
    expect(r.events[0]?.[1].annotations["nowcast"]).toBeUndefined();
  });
});
