/**
 * Early panes judged on their nowcast, on the real engine core's panes (docs/operations.md,
 * "Alerts", "Early panes on the nowcast"; docs/semantics.md, "Measured bias"). Two services, 200
 * requests per 10 s window each, errors arriving 50 ms after they happen and successes 6 s after:
 * every early pane reads high. `slow` settles at 15 % in every window; `real` too, except a few
 * incident windows after warm-up that settle at 25 %. The rule's threshold is 20 % on the default
 * `alerting` policy (early panes every 5 s: before the end and right after it, ages "1+0", "1+1").
 * Oracle: each window's settled error ratio brute-forced from the raw events.
 */
import { createCore, validateCoreConfig } from "@tidemark/engine/core";
import type { Pane, TelemetryEvent } from "@tidemark/engine/protocol";
import { describe, expect, it } from "vitest";
import { parseAlerts, scopeOf } from "../alerts/alerts-config.js";
import { PaneSamples } from "../prom/pane-samples.js";
import { AlertBook } from "./alert-book.js";

const W = 10_000;
const PER_WINDOW = 200;
const WINDOWS = 70;
const T0 = 1_767_225_600_000;
const THRESHOLD = 0.2;
const config = validateCoreConfig({ partitions: 1 });
/** Past the reference horizon plus a few windows: the bias of every stage and age is measured. */
const WARM = T0 + config.referenceHorizonMs + 6 * W;
/** Window starts of `real` settling at 25 %: after warm-up, far enough apart to resolve between. */
const INCIDENTS = new Set([40, 48, 56, 64].map((n) => T0 + n * W));

function stream(): TelemetryEvent[] {
  const out: TelemetryEvent[] = [];
  for (const service of ["slow", "real"])
    for (let i = 0; i < WINDOWS * PER_WINDOW; i++) {
      const ts = T0 + i * (W / PER_WINDOW);
      const failing = service === "real" && INCIDENTS.has(Math.floor(ts / W) * W) ? 5 : 3;
      const error = i % 20 < failing;
      out.push({
        ts,
        ingest_ts: ts + (error ? 50 : 6_000),
        service,
        route: "/pay",
        status: error ? 503 : 200,
        latency_ms: 40,
        user: `u${i % 50}`,
      });
    }
  return out.sort((a, b) => a.ingest_ts - b.ingest_ts || a.ts - b.ts);
}

/** Brute force: each service's settled error ratio per window start, over every raw event. */
function settled(events: readonly TelemetryEvent[]): Map<string, number> {
  const n = new Map<string, [number, number]>();
  for (const e of events) {
    const k = `${e.service} ${Math.floor(e.ts / W) * W}`;
    const c = n.get(k) ?? [0, 0];
    c[0]++;
    if (e.status >= 500) c[1]++;
    n.set(k, c);
  }
  return new Map([...n].map(([k, [count, errors]]) => [k, errors / count]));
}

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
  const core = createCore(config);
  const out = {
    pane: (p: Pane) => {
      current = p;
      panes.push(p);
      samples.apply(p);
      if (book.offer(p)) book.flush(samples);
    },
    late: () => undefined,
  };
  for (const e of events) core.event(0, e, out);
  core.finish(out);
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
