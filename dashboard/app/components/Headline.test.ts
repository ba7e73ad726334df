import { afterEach, describe, expect, it } from "vitest";
import { flushSync, mount, unmount } from "svelte";
import type { Pane } from "@tidemark/engine/protocol";
import Headline from "./Headline.svelte";
import { metricDef } from "../lib/metrics.js";
import { testPane } from "../../protocol/pane.fixture.js";

const pane = (service: string, count: number, errors: number, kind: Pane["kind"], bias: Pane["bias"]): Pane =>
  testPane({ service, count, errors, kind, bias, seq: 1, emittedAt: 12_000 });

let app: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (app) unmount(app);
  document.body.innerHTML = "";
});

function render(
  panel: Parameters<typeof metricDef>[0],
  panes: Pane[],
  nowcast = false,
  from?: "engine" | "browser" | "service",
) {
  app = mount(Headline, { target: document.body, props: { def: metricDef(panel), panes, nowcast, from } });
  flushSync();
  const text = (id: string) => document.querySelector(`[data-testid="${id}"]`)?.textContent?.trim();
  return { value: text("value"), bias: text("bias"), delay: text("delay"), kind: text("kind"), text };
}

describe("Headline", () => {
  it("reads an all-services pane as it is, and says when the browser pooled the services instead", () => {
    const users = (service: string, n: number): Pane => {
      const p = pane(service, 100, 0, "on-time", { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 2, windows: 8 });
      return { ...p, value: { ...p.value, users: n } };
    };
    const merged = render("users", [users("*", 150)], false, "engine");
    expect([merged.value, merged.text("scope"), merged.text("pooled-note"), merged.bias]).toEqual([
      "150 users",
      "all services, merged by the engine",
      undefined,
      "bias \u22122 %, 8 win.",
    ]);
    reset();
    // No all-services pane (an older engine): today's sum of the services, and a note saying so.
    const summed = render("users", [users("a", 100), users("b", 100)]);
    expect([summed.value, summed.text("scope"), summed.text("pooled-note")]).toEqual([
      "200 users",
      "sum, 2 services",
      "pooled in the browser: users summed, a user of several services counted once per service",
    ]);
    reset();
    expect(render("p99", [users("a", 1), users("b", 1)]).text("pooled-note")).toBe(
      "pooled in the browser: the largest service's p99, not the p99 of all requests",
    );
    reset();
    // One service's pane is not pooled: no note.
    expect(render("users", [users("a", 100)]).text("pooled-note")).toBeUndefined();
  });

  it("shows the value with its signed bias, emit delay and pane kind", () => {
    expect(
      render("errorRate", [
        pane("api", 1000, 29, "on-time", { countPct: 6.4, errorRatePp: -1.5, p99Pct: 2, usersPct: 4, windows: 30 }),
      ]),
    ).toMatchObject({
      value: "2.9 %",
      bias: "bias \u22121.5 pp, 30 win.",
      delay: "emit 2 s + 35 ms pipeline",
      kind: "on-time",
    });
  });

  it("pools services: summed rate, count bias weighted by windows, the least settled kind", () => {
    const h = render("requests", [
      pane("api", 1000, 0, "on-time", { countPct: 6, errorRatePp: 0, p99Pct: 0, usersPct: 0, windows: 30 }),
      pane("web", 500, 0, "early", { countPct: 3, errorRatePp: 0, p99Pct: 0, usersPct: 0, windows: 10 }),
    ]);
    // (1000 + 500) / 10 s; shortfall (6·30 + 3·10) / 40 = 5.25 % shown as −5.25 %.
    expect(h).toMatchObject({
      value: "150 req/s",
      bias: "bias \u22125.25 %, 30 win.",
      delay: "emit 2 s + 35 ms pipeline",
      kind: "early",
    });
    expect(document.querySelector('[data-testid="scope"]')?.textContent).toBe("sum, 2 services");
  });

  it("takes an early pane's rate over the part of the window elapsed when it was emitted", () => {
    // 45 requests 3 s into a 10 s window: 15 req/s so far, not 4.5.
    const early = {
      ...pane("api", 45, 0, "early", { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0 }),
      emittedAt: 3000,
      emitDelayMs: -7000,
    };
    expect(render("requests", [early])).toMatchObject({
      value: "15 req/s",
      bias: "bias not measured yet",
      delay: "emit \u22127 s + 35 ms pipeline",
      kind: "early",
    });
  });

  it("shows the distinct-users bias like the others: the shortfall signed as policy − reference, in %, with the window count", () => {
    expect(
      render("users", [
        pane("api", 10, 0, "final", { countPct: 1, errorRatePp: 0, p99Pct: 0, usersPct: 12.5, windows: 5 }),
      ]).bias,
    ).toBe("bias \u221212.5 %, 5 win.");
    unmount(app!);
    app = undefined;
    document.body.innerHTML = "";
    // two services: shortfall (8·30 + 2·10) / 40 = 6.5 % shown as −6.5 %; an over-count shows with a plus.
    const two = render("users", [
      pane("api", 10, 0, "final", { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 8, windows: 30 }),
      pane("web", 10, 0, "final", { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 2, windows: 10 }),
    ]);
    expect(two.bias).toBe("bias \u22126.5 %, 30 win.");
    unmount(app!);
    app = undefined;
    document.body.innerHTML = "";
    expect(
      render("users", [
        pane("api", 10, 0, "final", { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: -3, windows: 1 }),
      ]).bias,
    ).toBe("bias +3 %, 1 win.");
  });

  it("says when a metric has no measured bias, and shows an empty state without panes", () => {
    expect(
      render("users", [
        pane("api", 10, 0, "final", { countPct: 1, errorRatePp: 0, p99Pct: 0, usersPct: null, windows: 5 }),
      ]).bias,
    ).toBe("bias not measured for this metric");
    unmount(app!);
    app = undefined;
    document.body.innerHTML = "";
    expect(render("p99", [])).toMatchObject({ value: "–", kind: undefined });
  });

  it("shows the bias with its 95 % interval, marks a policy-wide fallback and a provisional lower bound", () => {
    const spread = { countPct: 0.5, errorRatePp: 0.3, p99Pct: 1, usersPct: 0.4 };
    const b = { countPct: 1, errorRatePp: -1.4, p99Pct: 2, usersPct: 1, windows: 30, spread };
    expect(
      render("errorRate", [pane("checkout", 1000, 29, "on-time", { ...b, stage: "on-time", scope: "service" })]).bias,
    ).toBe("bias \u22121.4 \u00b1 0.3 pp, 30 win.");
    reset();
    expect(
      render("errorRate", [pane("auth", 1000, 29, "on-time", { ...b, errorRatePp: -0.33, scope: "policy" })]).bias,
    ).toBe("bias \u22120.33 \u00b1 0.3 pp, 30 win., policy-wide");
    reset();
    expect(
      render("requests", [pane("auth", 1000, 0, "on-time", { ...b, countPct: 0.8, windows: 3, provisional: true })])
        .bias,
    ).toBe("bias \u2265 0.8 % under so far (provisional, 3 win.)");
  });

  it("with the nowcast on, shows the corrected value as an estimate with its interval, the measured value and the nowcast's error", () => {
    const p = testPane({
      service: "checkout",
      count: 1000,
      errors: 29,
      kind: "on-time",
      seq: 1,
      bias: { countPct: 2, errorRatePp: -1.4, p99Pct: 0, usersPct: 0, windows: 30 },
      nowcast: {
        value: { count: 1020, errorRate: 0.043, p99: 420, users: 41 },
        spread: { count: 10, errorRate: 0.003, p99: 20, users: 2 },
        error: { countPct: 0.2, errorRatePp: -0.1, p99Pct: 1, usersPct: 0.5, windows: 12 },
      },
    });
    const h = render("errorRate", [p], true);
    expect([h.value, h.text("interval"), h.text("estimate"), h.text("measured"), h.text("nowcast-error")]).toEqual([
      "\u2248 4.3 %",
      "\u00b1 0.3 %",
      "estimate",
      "measured 2.9 %",
      "nowcast error \u22120.1 pp, 12 win.",
    ]);
    expect(h.bias).toBe("bias \u22121.4 pp, 30 win.");
    reset();
    // Off: the measured value, no estimate.
    const off = render("errorRate", [p]);
    expect([off.value, off.text("estimate"), off.text("nowcast")]).toEqual(["2.9 %", undefined, undefined]);
    reset();
    // No nowcast on the pane (no bias measured for its kind yet): says so, keeps the measured value.
    const none = render("errorRate", [{ ...p, nowcast: undefined }], true);
    expect([none.value, none.text("nowcast-none")]).toEqual([
      "2.9 %",
      "no nowcast yet: no bias measured for this kind yet",
    ]);
  });
});

function reset(): void {
  if (app) unmount(app);
  app = undefined;
  document.body.innerHTML = "";
}
