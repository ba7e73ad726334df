import type { Pane, PaneKind } from "@tidemark/engine/protocol";
import { describe, expect, it } from "vitest";
import type { AlertNotice } from "../rules/index.js";
import { SloBook } from "./slo-book.js";
import { parseSlos, type SloDefinition } from "./slo-config.js";
import { slopane, T0, W } from "./slo-pane.fixture.js";

const scope = { policies: ["alerting"], windowsMs: [W, 60_000] };

function slo(extra: Record<string, unknown> = {}): SloDefinition {
  const [s] = parseSlos(
    [{ name: "checkout", service: "checkout", objective: 0.999, policy: "alerting", ...extra }],
    scope,
    "test",
  );
  return s as SloDefinition;
}

interface Counted {
  count: number;
  errors: number;
  /** The nowcast's corrected counts and error-rate half-width, when measured. */
  nowcast?: { count: number; errors: number; spread: number };
}

/** The fixture's pane, with the bias and nowcast a measured policy would carry when `c.nowcast` is given. */
function pane(i: number, kind: PaneKind, c: Counted, service = "checkout"): Pane {
  const base = slopane(i, kind, c, { service });
  return {
    ...base,
    bias: {
      countPct: null,
      errorRatePp: c.nowcast ? 100 * (c.errors / c.count - c.nowcast.errors / c.nowcast.count) : null,
      p99Pct: null,
      usersPct: null,
      windows: 5,
    },
    ...(c.nowcast
      ? {
          nowcast: {
            value: { count: c.nowcast.count, errorRate: c.nowcast.errors / c.nowcast.count, p99: 1, users: 1 },
            spread: { count: null, errorRate: c.nowcast.spread, p99: null, users: null },
            error: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 5 },
          },
        }
      : {}),
  };
}

function rig(s: SloDefinition) {
  const events: Array<[string, AlertNotice]> = [];
  const book = new SloBook([s], "http://dash", {
    fired: (n) => events.push(["fired", n]),
    updated: () => undefined,
    ended: (n, how) => events.push([how, n]),
  });
  const offer = (...ps: Pane[]): void => {
    for (const p of ps) book.offer(p);
    book.flush();
  };
  const seen = (): string[] => events.map(([k, n]) => `${k} ${n.labels["severity"]}`);
  return { book, events, offer, seen };
}

/** Brute force: burn rate over windows [from, to] of per-window counts. */
function burn(windows: Counted[], from: number, to: number, pick: (c: Counted) => [number, number]): number {
  let n = 0;
  let e = 0;
  for (let i = Math.max(0, from); i <= to; i++) {
    const [cn, ce] = pick(windows[i] as Counted);
    n += cn;
    e += ce;
  }
  return e / n / 0.001;
}

describe("SLO burn-rate alerts", () => {
  it("a burst that burns 2 % of a 30-day budget within the hour pages within 5 minutes", () => {
    const r = rig(slo());
    const windows: Counted[] = [];
    for (let i = 0; i < 360; i++) windows.push({ count: 100, errors: 0 });
    // 18× over 4 minutes after an hour of clean traffic: 2.5 % of the budget in the hour.
    for (let i = 0; i < 24; i++) windows.push({ count: 100, errors: 27 });
    for (let i = 0; i < 6; i++) windows.push({ count: 100, errors: 0 });
    let pagedAt = -1;
    windows.forEach((c, i) => {
      r.offer(pane(i, "on-time", c));
      if (pagedAt < 0 && r.seen().includes("fired page")) pagedAt = i;
    });
    expect(pagedAt).toBeGreaterThan(360);
    expect((pagedAt - 359) * W).toBeLessThanOrEqual(5 * 60_000);
    const fired = r.events.find(([k, n]) => k === "fired" && n.labels["severity"] === "page")?.[1] as AlertNotice;
    expect(fired.labels).toEqual({
      alertname: "SLOBurnRate",
      slo: "checkout",
      service: "checkout",
      severity: "page",
      policy: "alerting",
    });
    // The tier it states (the 6h/30m one crosses 6× first here), against a brute force over the windows.
    const spans: Record<string, number> = { "1h": 360, "5m": 30, "6h": 2160, "30m": 180 };
    const longN = spans[fired.annotations["long_window"] as string] as number;
    const shortN = spans[fired.annotations["short_window"] as string] as number;
    const long = burn(windows, pagedAt - longN + 1, pagedAt, (c) => [c.count, c.errors]);
    const short = burn(windows, pagedAt - shortN + 1, pagedAt, (c) => [c.count, c.errors]);
    expect(Number(fired.annotations["burn_rate_long"])).toBeCloseTo(long, 2);
    expect(Number(fired.annotations["burn_rate_short"])).toBeCloseTo(short, 2);
    expect(long).toBeGreaterThan(Number(fired.annotations["factor"]));
    expect(short).toBeGreaterThan(Number(fired.annotations["factor"]));
    expect(fired.annotations["provisional"]).toMatch(/not measured/);
  });

  it("judges a batch (the replay) window by window: it fires where panes one by one would", () => {
    const windows: Counted[] = [];
    for (let i = 0; i < 360; i++) windows.push({ count: 100, errors: 0 });
    for (let i = 0; i < 24; i++) windows.push({ count: 100, errors: 27 });
    const single = rig(slo());
    windows.forEach((c, i) => single.offer(pane(i, "on-time", c)));
    const batch = rig(slo());
    for (const [i, c] of windows.entries()) batch.book.offer(pane(i, "on-time", c));
    batch.book.flush();
    // Same alerts, fired at the same pane with the same annotations (the severities' order aside).
    const fired = (r: typeof single) =>
      r.events
        .map(([k, n]) => [n.labels["severity"], k, n.startsAt, n.annotations])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(fired(batch)).toEqual(fired(single));
    expect(fired(batch).length).toBe(2);
  });

  it("a 1-hour slow burn raises the ticket tier and not the page", () => {
    const r = rig(slo());
    for (let i = 0; i < 360; i++) r.offer(pane(i, "on-time", { count: 1000, errors: 2 }));
    expect(r.seen()).toEqual(["fired ticket"]);
    const got = r.book.read("checkout");
    expect(got?.verdicts.map((v) => [v.tier.factor, v.crossed])).toEqual([
      [14.4, false],
      [6, false],
      [3, false],
      [1, true],
    ]);
    expect(got?.verdicts[3]?.long.corrected).toBeCloseTo(2, 12);
    // Budget: 1 − 2 / 1 over the period so far: spent twice over.
    expect(got?.budget.remaining).toBeCloseTo(1 - 2, 12);
  });

  it("below the traffic floor no tier fires", () => {
    const r = rig(slo({ minRequestsPerHour: 50_000 }));
    for (let i = 0; i < 60; i++) r.offer(pane(i, "on-time", { count: 100, errors: 50 }));
    expect(r.seen()).toEqual([]);
    const r2 = rig(slo({ minRequestsPerHour: 100 }));
    for (let i = 0; i < 60; i++) r2.offer(pane(i, "on-time", { count: 100, errors: 50 }));
    expect(r2.seen()).toEqual(["fired page", "fired ticket"]);
  });

  it("fires on the corrected burn rate when the raw one stays under the factor, stating both and the interval", () => {
    const r = rig(slo({ tiers: [{ severity: "page", long: "1h", short: "5m", factor: 14.4 }] }));
    const windows: Counted[] = [];
    // Correlated lateness: the policy sees 1 % errors, the nowcast (the reference's likely word) 2 %.
    for (let i = 0; i < 60; i++)
      windows.push({ count: 1000, errors: 10, nowcast: { count: 1100, errors: 22, spread: 0.002 } });
    windows.forEach((c, i) => r.offer(pane(i, "on-time", c)));
    const [kind, fired] = r.events[0] as [string, AlertNotice];
    expect(kind).toBe("fired");
    const raw = burn(windows, 0, 59, (c) => [c.count, c.errors]);
    const corrected = burn(windows, 0, 59, (c) => [c.nowcast?.count ?? 0, c.nowcast?.errors ?? 0]);
    expect(raw).toBeLessThan(14.4);
    expect(corrected).toBeGreaterThan(14.4);
    const v = r.book.read("checkout")?.verdicts[0];
    expect(v?.long.raw).toBeCloseTo(raw, 9);
    expect(v?.long.corrected).toBeCloseTo(corrected, 9);
    // Systematic bias: the half-width is the panes' (0.2 pp), not shrunk by √n.
    expect(v?.long.halfWidth).toBeCloseTo(0.002 / 0.001, 9);
    expect(fired.annotations["burn_rate_long_raw"]).toBe(String(Number(raw.toPrecision(4))));
    expect(fired.annotations["burn_rate_short"]).toBe(`${Number(corrected.toPrecision(4))} ± 2`);
    expect(fired.annotations["may_flip"]).toBe("false");
    expect(fired.annotations["bias"]).toMatch(/^-1 pp/);
  });

  it("says may_flip when the interval straddles the factor", () => {
    const r = rig(slo({ tiers: [{ severity: "page", long: "1h", short: "5m", factor: 14.4 }] }));
    for (let i = 0; i < 60; i++)
      r.offer(pane(i, "on-time", { count: 1000, errors: 10, nowcast: { count: 1000, errors: 15, spread: 0.001 } }));
    const fired = r.events[0]?.[1] as AlertNotice;
    expect([fired.annotations["may_flip"], fired.mayFlip]).toEqual(["true", true]);
  });

  it("retracts an alert raised on early panes that the on-time panes contradict", () => {
    const r = rig(slo({ tiers: [{ severity: "page", long: "1h", short: "5m", factor: 14.4 }] }));
    for (let i = 0; i < 59; i++) r.offer(pane(i, "on-time", { count: 1000, errors: 10 }));
    // An early pane reads a spike its on-time pane does not confirm.
    r.offer(pane(59, "early", { count: 1000, errors: 900 }));
    expect(r.seen()).toEqual(["fired page"]);
    expect(r.events[0]?.[1].paneKind).toBe("early");
    r.offer(pane(59, "on-time", { count: 1000, errors: 10 }));
    expect(r.seen()).toEqual(["fired page", "retracted page"]);
    expect(r.events[1]?.[1].annotations["retracted"]).toMatch(/^retracted: the on-time panes/);
  });

  it("keeps the budget over the period, beyond the held panes, equal to a brute-force sum", () => {
    const s = slo({ period: "3h", tiers: [{ severity: "ticket", long: "30m", short: "5m", factor: 1000 }] });
    const r = rig(s);
    const windows: Counted[] = [];
    for (let i = 0; i < 5 * 360; i++) windows.push({ count: 100 + (i % 7), errors: i % 5 === 0 ? 1 : 0 });
    windows.forEach((c, i) => r.offer(pane(i, "final", c)));
    // The period to the hour: windows held (the last 30 m + 15 m settling) and those whose end's hour reaches into the last 3 h.
    const t = T0 + windows.length * W;
    const hour = 3_600_000;
    const inPeriod = windows.filter((_, i) => {
      const end = T0 + (i + 1) * W;
      return end > t - 45 * 60_000 || end - (end % hour) + hour > t - 3 * hour;
    });
    const remaining = 1 - burn(inPeriod, 0, inPeriod.length - 1, (c) => [c.count, c.errors]);
    expect(r.book.read("checkout")?.budget.remaining).toBeCloseTo(remaining, 12);
  });
});
