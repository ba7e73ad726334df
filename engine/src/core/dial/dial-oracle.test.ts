/**
 * The dial against an independent computation (docs/semantics.md, "Measured bias", "Correlated
 * lateness", "Nowcast"): a generated stream where one service's delayed events fail far more often,
 * and, written here from the raw events alone, what each policy showed of each window and service
 * at each stage (arrival-lag W = log time − lag, one partition: an event is on time while
 * ingest_ts < end + lag, kept while ingest_ts < end + lag + grace) and what the reference holds.
 */
import { describe, expect, it } from "vitest";
import { ageBucketOf, type Pane, type TelemetryEvent } from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { createCore } from "../create-core.js";
import { simulate, withCorrelatedFailures } from "../simulation.js";
import { validateCoreConfig } from "../validate-config.js";

const STREAM = withCorrelatedFailures(simulate({ seed: 7, events: 24_000, spanMs: 600_000, services: 4 }), {
  service: "c",
  minDelayMs: 2_000,
  failRate: 0.3,
  seed: 8,
});
const config = validateCoreConfig({ partitions: 1 });
const H = config.referenceHorizonMs;
const N = config.biasWindows;
/** Means of ratios of exact counts: equal up to floating-point rounding. */
const TOLERANCE = 1e-9; // % and pp
/** TM_DIAL_REPORT=1 prints the measured figures next to the brute-force ones. */
const report = (...xs: unknown[]) => void (process.env.TM_DIAL_REPORT === "1" && console.log(...xs));

const isError = (e: TelemetryEvent) => e.status >= 500;
interface Tally {
  count: number;
  errors: number;
}
interface Cell {
  start: number;
  end: number;
  events: TelemetryEvent[];
}

/** Per window size: each window's events per service, windows in order. */
function cellsOf(sizeMs: number): Map<string, Cell[]> {
  const byWindow = new Map<number, Map<string, TelemetryEvent[]>>();
  for (const e of STREAM) {
    const start = Math.floor(e.ts / sizeMs) * sizeMs;
    const services = byWindow.get(start) ?? byWindow.set(start, new Map()).get(start)!;
    (services.get(e.service) ?? services.set(e.service, []).get(e.service)!).push(e);
  }
  const out = new Map<string, Cell[]>();
  for (const start of [...byWindow.keys()].sort((a, b) => a - b))
    for (const [service, events] of byWindow.get(start)!)
      (out.get(service) ?? out.set(service, []).get(service)!).push({ start, end: start + sizeMs, events });
  return out;
}

const tally = (events: readonly TelemetryEvent[], keep: (e: TelemetryEvent) => boolean): Tally => {
  const kept = events.filter(keep);
  return { count: kept.length, errors: kept.filter(isError).length };
};

function sample(ref: Tally, v: Tally): { countPct: number; errorRatePp: number | null } {
  return {
    countPct: (100 * (ref.count - v.count)) / ref.count,
    errorRatePp: v.count > 0 ? 100 * (v.errors / v.count - ref.errors / ref.count) : null,
  };
}

/** Mean of the last N samples' non-null values (null when none). */
function meanOfLast(samples: readonly (number | null)[]): number | null {
  const kept = samples.slice(-N).filter((x): x is number => x !== null);
  return kept.length === 0 ? null : kept.reduce((a, b) => a + b, 0) / kept.length;
}

function expectNear(actual: number | null | undefined, want: number | null): void {
  if (want === null) return void expect(actual ?? null).toBeNull();
  expect(actual).not.toBeNull();
  expect(Math.abs((actual as number) - want)).toBeLessThan(TOLERANCE);
}

/** The log time the reference closes a window at: the first input at or after end + horizon. */
const inputTimes = STREAM.map((e) => e.ingest_ts);
const LAST_HEARTBEAT = (inputTimes.at(-1) as number) + 2 * H;
const closeAt = (end: number): number => inputTimes.find((t) => t >= end + H) ?? LAST_HEARTBEAT;

const core = createCore(config);
const out = capture();
for (const e of STREAM) core.event(0, e, out);
core.heartbeat(0, LAST_HEARTBEAT, out);
const status = core.status();
const policyOf = (name: string) => config.policies.find((p) => p.name === name)!;
/** The dashboard policy's early cadence: its early panes after the window's end are bucketed by it. */
const EARLY_MS = policyOf("dashboard").earlyEveryMs as number;
const onTimeLimit = (name: string, c: Cell) => {
  const p = policyOf(name);
  return c.end + (p.watermark as { lagMs: number }).lagMs + (p.mode === "final-only" ? p.graceMs : 0);
};
const finalLimit = (name: string, c: Cell) =>
  c.end + (policyOf(name).watermark as { lagMs: number }).lagMs + policyOf(name).graceMs;
const servicePanes = (name: string, sizeMs: number) =>
  out.panes.filter((p) => p.policy === name && p.window.end - p.window.start === sizeMs && p.key.route === undefined);

describe("the dial against an independent computation over the raw events", () => {
  it("per-service on-time and final bias, per policy and window size, equal the brute-force figures", () => {
    let compared = 0;
    for (const sizeMs of [10_000, 60_000])
      for (const [service, cells] of cellsOf(sizeMs))
        for (const name of ["dashboard", "alerting", "billing"]) {
          const dial = status.policies
            .find((p) => p.name === name)
            ?.services.find((d) => d.service === service && d.windowMs === sizeMs);
          for (const [stage, limit] of [
            ["onTime", onTimeLimit],
            ["final", finalLimit],
          ] as const) {
            const samples = cells.map((c) =>
              sample(
                tally(c.events, () => true),
                tally(c.events, (e) => e.ingest_ts < limit(name, c)),
              ),
            );
            const bias = dial?.[stage];
            const want = meanOfLast(samples.map((s) => s.errorRatePp));
            if (sizeMs === 10_000 && name !== "billing")
              report(
                `${name} ${service} ${stage}: errorRatePp ${bias?.errorRatePp} (brute force ${want}), countPct ${bias?.countPct}`,
              );
            expect(bias?.windows).toBe(Math.min(N, cells.length));
            expect(bias?.scope).toBe("service");
            expectNear(bias?.countPct, meanOfLast(samples.map((s) => s.countPct)));
            expectNear(bias?.errorRatePp, meanOfLast(samples.map((s) => s.errorRatePp)));
            compared++;
          }
        }
    expect(compared).toBe(2 * 4 * 3 * 2);
  });

  it("the correlated service shows its own large error-rate shortfall; the others do not", () => {
    const dashboard = status.policies.find((p) => p.name === "dashboard")!;
    const final = (s: string) => dashboard.services.find((d) => d.service === s && d.windowMs === 10_000)!.final;
    expect(final("c").errorRatePp).toBeLessThan(-1);
    for (const s of ["a", "b", "d"]) expect(Math.abs(final(s).errorRatePp as number)).toBeLessThan(0.5);
    // The pooled figure (the old single dial) hides it: between the culprit's and the others'.
    expect(dashboard.bias.errorRatePp as number).toBeGreaterThan(final("c").errorRatePp as number);
  });

  it("lateness correlation: exact on-time and late counts per service, and only the correlated service flagged", () => {
    for (const name of ["dashboard", "alerting"]) {
      const flagged: string[] = [];
      for (const [service, cells] of cellsOf(10_000)) {
        const last = cells.slice(-N);
        const onTime = last.map((c) => tally(c.events, (e) => e.ingest_ts < onTimeLimit(name, c)));
        const all = last.map((c) => tally(c.events, () => true));
        const sum = (xs: Tally[], f: keyof Tally) => xs.reduce((a, x) => a + x[f], 0);
        const want = {
          onTimeEvents: sum(onTime, "count"),
          onTimeErrors: sum(onTime, "errors"),
          lateEvents: sum(all, "count") - sum(onTime, "count"),
          lateErrors: sum(all, "errors") - sum(onTime, "errors"),
        };
        const got = status.policies
          .find((p) => p.name === name)
          ?.services.find((d) => d.service === service && d.windowMs === 10_000)?.lateness;
        expect(got).toMatchObject(want);
        // The two-proportion z test with the pooled proportion, written out.
        const p1 = want.onTimeErrors / want.onTimeEvents;
        const p2 = want.lateErrors / want.lateEvents;
        const pooled = (want.onTimeErrors + want.lateErrors) / (want.onTimeEvents + want.lateEvents);
        const z = (p2 - p1) / Math.sqrt(pooled * (1 - pooled) * (1 / want.onTimeEvents + 1 / want.lateEvents));
        expect(got?.z).toBeCloseTo(z, 9);
        if (got?.flagged) flagged.push(service);
        report(`${name} ${service} lateness: z ${got?.z} p ${got?.p} ratio ${got?.ratio} flagged ${got?.flagged}`);
      }
      expect([name, flagged]).toEqual([name, ["c"]]);
    }
  });

  const dashboardCells = cellsOf(10_000);
  const cellAt = (service: string, start: number) => dashboardCells.get(service)?.find((c) => c.start === start);
  const refOf = (c: Cell) => tally(c.events, () => true);

  it("early panes show the events arrived by their emission, and carry their own age bucket's bias", () => {
    const early = servicePanes("dashboard", 10_000).filter((p) => p.kind === "early");
    // What an early pane shows, from the raw events: all of the window's events arrived by then.
    for (const p of early)
      expect(p.value.count).toBe(
        tally(cellAt(p.key.service, p.window.start)!.events, (e) => e.ingest_ts < p.emittedAt).count,
      );
    // Per (service, window, bucket): the last early pane there is what the policy showed at that age.
    const shown = new Map<string, Pane>();
    for (const p of early)
      shown.set(
        `${p.key.service}|${p.window.start}|${ageBucketOf(p.window.start, p.window.end, p.emittedAt, EARLY_MS)}`,
        p,
      );
    const closes = new Set(dashboardCells.get("a")!.map((c) => closeAt(c.end)));
    let compared = 0;
    for (const [service, cells] of dashboardCells) {
      // The service's last early pane in each bucket (emitted at a log time no reference close shares).
      const lastIn = new Map<string, Pane>();
      for (const p of early)
        if (p.key.service === service && !closes.has(p.emittedAt)) lastIn.set(p.bias.age as string, p);
      for (const [age, pane] of lastIn) {
        expect(ageBucketOf(pane.window.start, pane.window.end, pane.emittedAt, EARLY_MS)).toBe(age);
        const samples = cells
          .filter((c) => closeAt(c.end) < pane.emittedAt && shown.has(`${service}|${c.start}|${age}`))
          .map((c) => {
            const v = shown.get(`${service}|${c.start}|${age}`)!;
            return sample(
              refOf(c),
              tally(c.events, (e) => e.ingest_ts < v.emittedAt),
            );
          });
        if (samples.length === 0) continue;
        expect([pane.bias.stage, pane.bias.scope, pane.bias.windows]).toEqual([
          "early",
          "service",
          Math.min(N, samples.length),
        ]);
        expectNear(pane.bias.countPct, meanOfLast(samples.map((s) => s.countPct)));
        expectNear(pane.bias.errorRatePp, meanOfLast(samples.map((s) => s.errorRatePp)));
        compared++;
      }
    }
    expect(compared).toBeGreaterThanOrEqual(4 * 4);
  });

  it("the nowcast's own error is measured, and smaller than the raw value's on the correlated service", () => {
    const onTime = servicePanes("dashboard", 10_000).filter((p) => p.kind === "on-time");
    const closes = new Set(dashboardCells.get("a")!.map((c) => closeAt(c.end)));
    for (const service of ["a", "b", "c", "d"]) {
      const mine = onTime.filter((p) => p.key.service === service);
      const published = new Map(mine.map((p) => [p.window.start, p]));
      const pane = mine.filter((p) => !closes.has(p.emittedAt)).at(-1)!;
      const windows = dashboardCells
        .get(service)!
        .filter((c) => closeAt(c.end) < pane.emittedAt && published.get(c.start)?.nowcast !== undefined);
      const nowcastErr = windows.map((c) => {
        const r = refOf(c);
        const nc = published.get(c.start)!.nowcast!.value;
        return {
          countPct: (100 * (nc.count - r.count)) / r.count,
          errorRatePp: 100 * (nc.errorRate - r.errors / r.count),
        };
      });
      const rawErr = windows.map((c) =>
        sample(
          refOf(c),
          tally(c.events, (e) => e.ingest_ts < onTimeLimit("dashboard", c)),
        ),
      );
      expect(pane.nowcast?.error.windows).toBe(Math.min(N, windows.length));
      expectNear(pane.nowcast?.error.countPct, meanOfLast(nowcastErr.map((s) => s.countPct)));
      expectNear(pane.nowcast?.error.errorRatePp, meanOfLast(nowcastErr.map((s) => s.errorRatePp)));
      if (service !== "c") continue;
      // The raw newest value under-reports c's errors by more than a point; the nowcast much less.
      const raw = meanOfLast(rawErr.map((s) => s.errorRatePp)) as number;
      const nowcast = pane.nowcast?.error.errorRatePp as number;
      report(
        `dashboard c on-time: raw errorRatePp ${raw}, nowcast error ${pane.nowcast?.error.errorRatePp}; raw countPct ${meanOfLast(rawErr.map((s) => s.countPct))}, nowcast error ${pane.nowcast?.error.countPct}`,
      );
      expect(raw).toBeLessThan(-1);
      expect(Math.abs(nowcast)).toBeLessThan(Math.abs(raw) / 2);
      expect(Math.abs(pane.nowcast?.error.countPct as number)).toBeLessThan(
        Math.abs(meanOfLast(rawErr.map((s) => s.countPct)) as number),
      );
    }
  });

  it("a provisional bias is on every pane within 30 s of log time of the dashboard's first on-time pane", () => {
    const first = Math.min(
      ...out.panes.filter((p) => p.policy === "dashboard" && p.kind === "on-time").map((p) => p.emittedAt),
    );
    const firstClose = closeAt(dashboardCells.get("a")![0]!.end);
    const meanwhile = out.panes.filter((p) => p.emittedAt >= first + 30_000 && p.emittedAt < firstClose);
    const dashboard = meanwhile.filter((p) => p.policy === "dashboard" && p.window.end - p.window.start === 10_000);
    expect(dashboard.length).toBeGreaterThan(100);
    for (const p of dashboard) expect([p.id, p.bias.provisional, p.bias.windows > 0]).toEqual([p.id, true, true]);
    // Any policy and size: a stage shown for the first time is compared at the next check (every 10 s
    // of log time), so its panes carry a figure from then on.
    const firstShown = new Map<string, number>();
    const slot = (p: Pane) => `${p.policy}|${p.window.end - p.window.start}|${p.bias.stage}|${p.bias.age ?? ""}`;
    for (const p of out.panes) if (!firstShown.has(slot(p))) firstShown.set(slot(p), p.emittedAt);
    const bad = meanwhile.filter(
      (p) => p.emittedAt >= firstShown.get(slot(p))! + 10_000 && !(p.bias.provisional && p.bias.windows > 0),
    );
    expect(bad.length).toBe(0);
  });
});
