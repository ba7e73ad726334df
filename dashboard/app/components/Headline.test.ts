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

function render(panel: Parameters<typeof metricDef>[0], panes: Pane[]) {
  app = mount(Headline, { target: document.body, props: { def: metricDef(panel), panes } });
  flushSync();
  const text = (id: string) => document.querySelector(`[data-testid="${id}"]`)?.textContent?.trim();
  return { value: text("value"), bias: text("bias"), delay: text("delay"), kind: text("kind") };
}

describe("Headline", () => {
  it("shows the value with its signed bias, emit delay and pane kind", () => {
    expect(
      render("errorRate", [
        pane("api", 1000, 29, "on-time", { countPct: 6.4, errorRatePp: -1.5, p99Pct: 2, usersPct: 4, windows: 30 }),
      ]),
    ).toEqual({
      value: "2.9 %",
      bias: "bias \u22121.5 pp (30 windows)",
      delay: "emit 2 s + 35 ms pipeline",
      kind: "on-time",
    });
  });

  it("combines services: summed rate, count bias weighted by windows, the least settled kind", () => {
    const h = render("requests", [
      pane("api", 1000, 0, "on-time", { countPct: 6, errorRatePp: 0, p99Pct: 0, usersPct: 0, windows: 30 }),
      pane("web", 500, 0, "early", { countPct: 3, errorRatePp: 0, p99Pct: 0, usersPct: 0, windows: 10 }),
    ]);
    // (1000 + 500) / 10 s; shortfall (6·30 + 3·10) / 40 = 5.25 % shown as −5.25 %.
    expect(h).toEqual({
      value: "150 req/s",
      bias: "bias \u22125.25 % (30 windows)",
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
    expect(render("requests", [early])).toEqual({
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
    ).toBe("bias \u221212.5 % (5 windows)");
    unmount(app!);
    app = undefined;
    document.body.innerHTML = "";
    // two services: shortfall (8·30 + 2·10) / 40 = 6.5 % shown as −6.5 %; an over-count shows with a plus.
    const two = render("users", [
      pane("api", 10, 0, "final", { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 8, windows: 30 }),
      pane("web", 10, 0, "final", { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 2, windows: 10 }),
    ]);
    expect(two.bias).toBe("bias \u22126.5 % (30 windows)");
    unmount(app!);
    app = undefined;
    document.body.innerHTML = "";
    expect(
      render("users", [
        pane("api", 10, 0, "final", { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: -3, windows: 1 }),
      ]).bias,
    ).toBe("bias +3 % (1 window)");
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
});
