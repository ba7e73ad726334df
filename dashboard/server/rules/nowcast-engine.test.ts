/**
 * Early panes judged on their nowcast, on the real engine core's panes (docs/operations.md,
 * "Alerts", "Early panes on the nowcast"; docs/semantics.md, "Measured bias"). Two services, 200
 * requests per 10 s window each, errors arriving 50 ms after they happen and successes 6 s after:
 * every early pane reads high. `slow` settles at 15 % in every window; `real` too, except a few
 * incident windows after warm-up that settle at 25 %. The rule's threshold is 20 % on the default
 * `alerting` policy (early panes every 5 s: before the end and right after it, ages "1+0", "1+1").
 * Oracle: each window's settled error ratio brute-forced from the raw events.
 */
import type { Pane, TelemetryEvent } from "@tidemark/engine/protocol";
import { describe, expect, it } from "vitest";
import { parseAlerts, scopeOf } from "../alerts/alerts-config.js";
import { PaneSamples } from "../prom/pane-samples.js";
import { AlertBook } from "./alert-book.js";
import { INCIDENTS, runCore, settled, stream, W, WARM } from "./late-successes.fixture.js";

const THRESHOLD = 0.2;

interface Seen {
  event: string;
  service: string;
  /** The pane whose flush moved the alert. */
  pane: Pane;
}

function run(events: readonly TelemetryEvent[]) {
  const rules = parseAlerts(
    {
      rules: [{ alert: "HighErrorRate", expr: `tidemark_error_ratio{policy="alerting",window="10s"} > ${THRESHOLD}` }],
    },
    scopeOf({}, "config"),
    "config",
  ).rules;
  const samples = new PaneSamples({ windowsPerSeries: 1000, maxWindows: 100_000, discardingPolicies: [] });
  const seen: Seen[] = [];
  let current: Pane | undefined;
  const note = (event: string, service: string | undefined): void => {
    seen.push({ event, service: service ?? "", pane: current as Pane });
  };
  const book = new AlertBook(
    rules,
    { dashboardUrl: "http://dash", historySize: 50 },
    {
      fired: (n) => note("fired", n.labels["service"]),
      updated: () => undefined,
      ended: (n, how) => note(how, n.labels["service"]),
    },
  );
  const panes: Pane[] = [];
  runCore(events, (p) => {
    current = p;
    panes.push(p);
    samples.apply(p);
    if (book.offer(p)) book.flush(samples);
  });
  return { seen, panes };
}

describe("alert rules on the engine core's early panes, judged on the nowcast", () => {
  const events = stream();
  const truth = settled(events);
  const { seen, panes } = run(events);
  const ofRule = (p: Pane) =>
    p.policy === "alerting" && p.key.route === undefined && p.window.end - p.window.start === W;
  const early = panes.filter((p) => ofRule(p) && p.kind === "early" && ["slow", "real"].includes(p.key.service));
  const warm = (p: Pane) => p.emittedAt >= WARM;

  it("the stream is what the test says: 15 % settled everywhere but the incidents, early panes reading high", () => {
    for (const [k, r] of truth) {
      const [service, start] = k.split(" ");
      expect(r).toBe(service === "real" && INCIDENTS.has(Number(start)) ? 0.25 : 0.15);
    }
    // Early panes right after the window's end, of their own ages, read above the threshold raw.
    const after = early.filter((p) => warm(p) && p.key.service === "slow" && p.emittedAt >= p.window.end);
    expect(new Set(after.map((p) => p.bias.age))).toEqual(new Set(["1+0", "1+1"]));
    expect(after.filter((p) => p.bias.age === "1+0").every((p) => p.value.errorRate > THRESHOLD)).toBe(true);
  });

  it("after warm-up every early pane of slow carries a measured nowcast under the threshold", () => {
    const judged = early.filter((p) => warm(p) && p.key.service === "slow");
    expect(judged.length).toBeGreaterThan(100);
    for (const p of judged) {
      expect(p.bias.provisional, `${p.window.start} ${p.bias.age}`).toBeFalsy();
      expect(p.bias.scope).toBe("service");
      expect(p.nowcast?.spread.errorRate, `${p.window.start} ${p.bias.age}`).not.toBeNull();
      const truthOf = truth.get(`slow ${p.window.start}`) as number;
      const nc = p.nowcast?.value.errorRate as number;
      // Within its interval of the settled truth (brute force), and that is below the threshold.
      expect(Math.abs(nc - truthOf), `${p.window.start} ${p.bias.age}`).toBeLessThanOrEqual(
        (p.nowcast?.spread.errorRate as number) + 1e-12,
      );
      expect(nc).toBeLessThan(THRESHOLD);
    }
  });

  it("before the bias is measured the early panes raise a false alarm, retracted by the settled panes", () => {
    const before = seen.filter((s) => s.service === "slow" && s.pane.emittedAt < WARM);
    expect(before[0]?.event).toBe("fired");
    expect(before[0]?.pane.kind).toBe("early");
    expect(before.some((s) => s.event === "retracted")).toBe(true);
  });

  it("after warm-up slow never fires; real fires on an early pane of each incident window and only then", () => {
    const after = seen.filter((s) => warm(s.pane));
    // slow's last alert before warm-up was retracted; nothing after.
    const slowLast = seen.filter((s) => s.service === "slow" && !warm(s.pane)).at(-1);
    expect(slowLast?.event).toBe("retracted");
    expect(after.filter((s) => s.service === "slow")).toEqual([]);
    const fired = after.filter((s) => s.service === "real" && s.event === "fired");
    expect(fired.map((s) => s.pane.window.start)).toEqual([...INCIDENTS]);
    for (const s of fired) {
      expect(s.pane.kind).toBe("early");
      expect(s.pane.key.service).toBe("real");
    }
    // No incident alert is retracted: the settled panes agree with the nowcast.
    expect(after.filter((s) => s.event === "retracted")).toEqual([]);
  });
});
