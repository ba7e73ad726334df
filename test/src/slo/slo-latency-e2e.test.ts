/**
 * The latency SLI through a real nats-server (docs/slo.md, "Latency SLI"): panes carrying the
 * engine's exact slow counts (`value.latencyAbove`) published to TM_PANES; the dashboard's burn
 * rates are the slow counts', on-time panes corrected by the bias it measured against the final
 * panes of earlier windows. Oracle: a brute force over the published panes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pane, PaneKind } from "@tidemark/engine/protocol";
import type { AlertsView } from "@tidemark/dashboard";
import { waitFor } from "../index.js";
import { pane, publishPanes, startRig, type DashboardRig } from "../dashboard/fixtures.js";

const W = 10_000;
const N = 70;
/** Final panes come 10 windows after the on-time ones. */
const LAG = 10;
const base = Math.floor(Date.now() / W) * W - 30 * 60_000;
const slos = [
  {
    name: "search-latency",
    service: "search",
    objective: 0.99,
    policy: "alerting",
    sli: { latencyAboveMs: 300 },
    tiers: [{ severity: "page", long: "10m", short: "5m", factor: 6 }],
  },
];
let rig: DashboardRig;

/** Slow requests of window n: the final pane's, and fewer on time (the slow ones come late). */
const slowFinal = (n: number): number => 10 + (n % 5);
const slowOnTime = (n: number): number => slowFinal(n) - 4 - (n % 2);
const at = (n: number, kind: PaneKind, slow: number): Pane => {
  const p = pane({
    policy: "alerting",
    service: "search",
    windowMs: W,
    start: base + n * W,
    seq: kind === "final" ? 2 : 1,
    kind,
    count: 200,
  });
  return { ...p, value: { ...p.value, latencyAbove: { "300": slow } } } as Pane;
};

beforeAll(async () => {
  rig = await startRig({ slos } as never, { stream: true });
});
afterAll(async () => {
  await rig?.stop();
});

describe("the latency SLI on panes through TM_PANES", () => {
  it("burns on the exact slow counts, corrected by the bias measured against the final panes", async () => {
    const ps: Pane[] = [];
    for (let i = 0; i < N; i++) {
      ps.push(at(i, "on-time", slowOnTime(i)));
      if (i >= LAG) ps.push(at(i - LAG, "final", slowFinal(i - LAG)));
    }
    await publishPanes(rig.nc, ps);
    const end = base + N * W;
    let view: AlertsView | undefined;
    await waitFor(
      async () => {
        view = (await (await fetch(`${rig.dash.url}/api/alerts`)).json()) as AlertsView;
        return view.slos?.[0]?.at === end;
      },
      30_000,
      "the last pane read",
    );
    // Brute force: window j's on-time pane is corrected by the mean (pp) of (on-time − final ratio)
    // over the last 30 windows whose final pane came before it, with a Student-t half-width.
    const biasAt = (j: number) => {
      const last = j - LAG - 1;
      const ks = Array.from({ length: 30 }, (_, k) => last - 29 + k).filter((k) => k >= 0);
      const diffs = ks.map((k) => (100 * (slowOnTime(k) - slowFinal(k))) / 200);
      const mean = diffs.reduce((a, b) => a + b, 0) / diffs.length;
      const sd = Math.sqrt(diffs.reduce((a, d) => a + (d - mean) ** 2, 0) / (diffs.length - 1));
      // t(0.975, 29) = 2.0452 (standard tables): every window read here has 30 measured.
      expect(diffs.length).toBe(30);
      return { mean, hw: (2.0452 * sd) / Math.sqrt(30) };
    };
    const short = Array.from({ length: 30 }, (_, k) => N - 30 + k);
    const settled = short.filter((j) => j < N - LAG);
    const onTime = short.filter((j) => j >= N - LAG);
    const requests = 200 * short.length;
    const raw =
      (settled.reduce((a, j) => a + slowFinal(j), 0) + onTime.reduce((a, j) => a + slowOnTime(j), 0)) / requests / 0.01;
    const corrected =
      (settled.reduce((a, j) => a + slowFinal(j), 0) +
        onTime.reduce((a, j) => a + 200 * Math.max(0, slowOnTime(j) / 200 - biasAt(j).mean / 100), 0)) /
      requests /
      0.01;
    const halfWidth = onTime.reduce((a, j) => a + (200 * biasAt(j).hw) / 100, 0) / requests / 0.01;
    const tier = view?.slos?.[0]?.tiers[0];
    expect(tier?.short.window).toBe("5m");
    expect(tier?.short.raw).toBeCloseTo(raw, 9);
    expect(tier?.short.corrected).toBeCloseTo(corrected, 9);
    expect(tier?.short.halfWidth).toBeCloseTo(halfWidth, 3);
    expect(tier?.short.corrected).toBeGreaterThan(tier?.short.raw ?? Infinity);
    expect(tier?.provisional).toBe(false);
    expect(view?.slos?.[0]?.status).toBeNull();
  });
});
