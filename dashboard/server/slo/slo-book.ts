/**
 * Every SLO's burn-rate alerts (docs/slo.md, "Alerts"): one alert series per SLO and severity,
 * crossed when one of its tiers' corrected burn rates is above the tier's factor in both windows.
 * The series' state machine is the alert rules' (rules/series-alert.ts): an alert raised on early
 * panes is retracted when the on-time or final panes of the same windows do not cross. Pure: the
 * panes' own times are the only clock.
 */
import type { Pane, PaneKind } from "@tidemark/engine/protocol";
import type { ActiveAlert } from "../../protocol/alerts.js";
import type { SloView } from "../../protocol/slos.js";
import { signature } from "../promql/index.js";
import type { AlertListener, AlertNotice } from "../rules/index.js";
import { SeriesAlert, type Transition, type Verdict } from "../rules/series-alert.js";
import { budgetOf, tierVerdict, windowBurn, type Budget, type TierVerdict } from "./burn-rate.js";
import { BudgetLedger } from "./budget-ledger.js";
import { SloCells } from "./slo-cells.js";
import type { SloSeries } from "./slo-series.js";
import type { Severity, SloDefinition, SloTier } from "./slo-config.js";
import { sloAnnotations, sloLabels, SLO_ALERTNAME } from "./slo-text.js";
import { sloView, type SloRead } from "./slo-view.js";

export type { SloRead };

/**
 * Panes held past the longest tier window: the newest window end runs ahead of the windows still
 * settling (early panes of the next window come before the on-time pane of this one).
 */
const SETTLE_MS = 15 * 60_000;

export interface SloReading extends Verdict {
  /** The tier the alert states: the first that crossed, else the nearest to crossing. */
  readonly verdict: TierVerdict;
  readonly budget: Budget;
  readonly kind: PaneKind;
}

interface SeverityRun {
  readonly slo: SloDefinition;
  readonly severity: Severity;
  readonly tiers: readonly SloTier[];
  readonly alert: SeriesAlert<SloReading>;
  /** Window ends whose verdict crossed: re-read when their panes settle (retraction). */
  readonly crossedEnds: Set<number>;
  readonly reach: number;
  /** The newest window end read. */
  read: number;
  notice: AlertNotice | undefined;
}

interface SloState {
  readonly slo: SloDefinition;
  readonly cells: SloCells;
  readonly runs: SeverityRun[];
  readonly dirty: Set<number>;
  /** Distinct tier windows, for the series. */
  readonly spans: readonly number[];
  /** The newest window end recorded in the series. */
  recorded: number;
}

export class SloBook {
  private readonly states: SloState[];

  constructor(
    slos: readonly SloDefinition[],
    private readonly dashboardUrl: string,
    private readonly listener: AlertListener,
    private readonly series?: SloSeries,
    ledgers: readonly BudgetLedger[] = slos.map((slo) => new BudgetLedger(slo)),
  ) {
    this.states = slos.map((slo, i) => ({
      slo,
      cells: new SloCells(slo, Math.max(...slo.tiers.map((t) => t.longMs)) + SETTLE_MS, ledgers[i]),
      runs: (["page", "ticket"] as const).flatMap((severity) => runOf(slo, severity)),
      dirty: new Set(),
      spans: [...new Set(slo.tiers.flatMap((t) => [t.longMs, t.shortMs]))].sort((a, b) => a - b),
      recorded: -Infinity,
    }));
  }

  get empty(): boolean {
    return this.states.length === 0;
  }

  /** Takes a pane; true when a flush has work. */
  offer(pane: Pane): boolean {
    let work = false;
    for (const s of this.states) {
      if (!s.cells.covers(pane)) continue;
      const end = s.cells.apply(pane);
      if (end === undefined) continue;
      s.dirty.add(end);
      work = true;
    }
    return work;
  }

  /** Reads every SLO at its new window ends, and again at its newest and crossed ends whose panes changed. */
  flush(): boolean {
    let read = false;
    for (const s of this.states) {
      if (s.dirty.size === 0) continue;
      read = true;
      const dirty = [...s.dirty];
      s.dirty.clear();
      const newest = s.cells.newestEnd;
      for (const run of s.runs) {
        // Crossed ends whose panes changed (retraction), then every new end in order (a batch or the replay).
        const touched = (e: number) => dirty.some((d) => d <= e && e < d + run.reach);
        const again = [...run.crossedEnds].filter((e) => e <= run.read && touched(e));
        const fresh = dirty.filter((e) => e > run.read);
        // The newest end read before is read again when its panes changed (a later early pane, the
        // on-time pane): a window may cross only on them.
        if (newest <= run.read && !again.includes(newest) && touched(newest)) again.push(newest);
        for (const t of again.sort((a, b) => a - b)) this.record(s, run, t);
        for (const t of fresh.sort((a, b) => a - b)) this.record(s, run, t);
        run.read = Math.max(run.read, newest);
        const keepFrom = newest - 2 * run.reach;
        run.alert.forgetBefore(keepFrom);
        for (const e of run.crossedEnds) if (e <= keepFrom) run.crossedEnds.delete(e);
      }
      if (this.series) this.recordSeries(s, this.series, dirty);
    }
    return read;
  }

  /** Every tier's verdict of an SLO at window end t (the newest when omitted). */
  read(name: string, t?: number): SloRead | undefined {
    const s = this.states.find((x) => x.slo.name === name);
    if (!s) return undefined;
    const at = t ?? s.cells.newestEnd;
    const verdicts = s.slo.tiers.map((tier) => verdictAt(s, tier, at));
    return { verdicts, budget: budgetAt(s, verdicts[0] as TierVerdict, at), status: s.cells.status, at };
  }

  /** Every SLO as the dashboard panel shows it, read at its newest window end. */
  views(): SloView[] {
    return this.states.map((s) => {
      const alerts: Record<string, "inactive" | "pending" | "firing"> = {};
      for (const run of s.runs) alerts[run.severity] = run.alert.state;
      return sloView(s.slo, this.read(s.slo.name) as SloRead, alerts, s.cells.countedFrom());
    });
  }

  /** Firing and pending SLO alerts, as /api/alerts lists them. */
  active(): ActiveAlert[] {
    const out: ActiveAlert[] = [];
    for (const s of this.states)
      for (const run of s.runs) {
        const state = run.alert.state;
        const latest = run.alert.latest;
        if (state === "inactive" || !latest) continue;
        const { startsAt: _startsAt, ...facts } = this.notice(run, latest, run.alert.activeAt);
        out.push({
          ...facts,
          state,
          activeAt: run.alert.activeAt,
          firedAt: state === "firing" ? run.alert.firedAt : null,
        });
      }
    return out;
  }

  /** The SLOs and their newest window end. */
  slos(): Array<{ slo: SloDefinition; newestEnd: number }> {
    return this.states.map((s) => ({ slo: s.slo, newestEnd: s.cells.newestEnd }));
  }

  /**
   * The series at every new window end; when older panes changed, the newest end is read again
   * (earlier samples keep what was read then, as a recording rule's do).
   */
  private recordSeries(s: SloState, series: SloSeries, dirty: readonly number[]): void {
    const ends = new Set(dirty.filter((e) => e > s.recorded));
    if (dirty.some((d) => d <= s.recorded)) ends.add(s.recorded);
    for (const t of [...ends].sort((a, b) => a - b)) {
      const burns = s.spans.map((span) => windowBurn(s.cells.sum(t, span).counts, span, s.slo.objective));
      const first = s.slo.tiers[0] as SloTier;
      const long = burns[s.spans.indexOf(first.longMs)] as (typeof burns)[number];
      series.record(s.slo, t, burns, budgetOf(s.cells.period(t), s.slo, long.corrected));
    }
    s.recorded = Math.max(s.recorded, s.cells.newestEnd);
  }

  private record(s: SloState, run: SeverityRun, t: number): void {
    const reading = readingAt(s, run, t);
    if (reading.crossed) run.crossedEnds.add(t);
    this.apply(run, run.alert.record(reading));
    const latest = run.alert.latest;
    if (run.alert.state !== "firing" || !run.notice || !latest) return;
    const next = this.notice(run, latest, run.notice.startsAt);
    if (JSON.stringify(next.annotations) === JSON.stringify(run.notice.annotations)) return;
    run.notice = next;
    this.listener.updated(next);
  }

  private apply(run: SeverityRun, t: Transition<SloReading> | undefined): void {
    if (t === undefined || t.kind === "pending") return;
    if (t.kind === "dropped") {
      run.notice = undefined;
      return;
    }
    if (t.kind === "fired") {
      run.notice = this.notice(run, t.verdict, run.alert.firedAt);
      this.listener.fired(run.notice);
      return;
    }
    const base = run.notice ?? this.notice(run, t.verdict, t.verdict.at);
    const by =
      t.by === "stale"
        ? "no pane came"
        : `the ${t.by.kind} panes of ${new Date(t.by.end).toISOString()} read ${t.by.verdict.long.corrected.toPrecision(3)}× / ${t.by.verdict.short.corrected.toPrecision(3)}×`;
    const reason = t.kind === "retracted" ? `retracted: ${by}, below the factor` : `resolved: ${by}`;
    run.notice = undefined;
    this.listener.ended(
      { ...base, annotations: { ...base.annotations, [t.kind]: reason } },
      t.kind,
      Math.max(t.at, base.startsAt),
      reason,
    );
  }

  private notice(run: SeverityRun, r: SloReading, startsAt: number): AlertNotice {
    const labels = sloLabels(run.slo, run.severity);
    return {
      fingerprint: signature(labels),
      alertname: SLO_ALERTNAME,
      labels,
      annotations: sloAnnotations(run.slo, r.verdict, r.budget),
      policy: run.slo.policy,
      windowMs: run.slo.paneMs,
      service: run.slo.service,
      panel: "errorRate",
      value: r.verdict.long.corrected,
      paneKind: r.kind,
      threshold: `> ${r.verdict.tier.factor}`,
      mayFlip: r.verdict.mayFlip,
      generatorURL: `${this.dashboardUrl}/?slo=${encodeURIComponent(run.slo.name)}`,
      startsAt,
    };
  }
}

function runOf(slo: SloDefinition, severity: Severity): SeverityRun[] {
  const tiers = slo.tiers.filter((t) => t.severity === severity);
  if (tiers.length === 0) return [];
  const reach = Math.max(...tiers.map((t) => t.shortMs));
  return [
    {
      slo,
      severity,
      tiers,
      alert: new SeriesAlert<SloReading>(0, reach),
      crossedEnds: new Set(),
      reach,
      read: -Infinity,
      notice: undefined,
    },
  ];
}

function verdictAt(s: SloState, tier: SloTier, t: number): TierVerdict {
  const long = windowBurn(s.cells.sum(t, tier.longMs).counts, tier.longMs, s.slo.objective);
  const short = windowBurn(s.cells.sum(t, tier.shortMs).counts, tier.shortMs, s.slo.objective);
  return tierVerdict(s.slo, tier, long, short);
}

function budgetAt(s: SloState, v: TierVerdict, t: number): Budget {
  return budgetOf(s.cells.period(t), s.slo, v.long.corrected);
}

function readingAt(s: SloState, run: SeverityRun, t: number): SloReading {
  const verdicts = run.tiers.map((tier) => verdictAt(s, tier, t));
  const nearness = (v: TierVerdict): number => Math.min(v.long.corrected, v.short.corrected) / v.tier.factor;
  const verdict = verdicts.find((v) => v.crossed) ?? verdicts.reduce((a, b) => (nearness(b) > nearness(a) ? b : a));
  const longest = Math.max(...run.tiers.map((x) => x.longMs));
  const window = s.cells.sum(t, longest);
  const newest = s.cells.cell(t);
  return {
    end: t,
    crossed: verdicts.some((v) => v.crossed),
    settled: !window.early,
    at: newest?.emittedAt ?? t,
    verdict,
    budget: budgetAt(s, verdict, t),
    kind: window.early ? "early" : (newest?.kind ?? "on-time"),
  };
}
