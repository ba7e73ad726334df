/**
 * Every alert rule, evaluated on pane updates (docs/decisions/0014-alerts.md): each pane a rule
 * reads marks its window; `flush` reads the rules at the marked windows, moves the alert series'
 * states, and keeps the recent history. Pure: the panes' own times are the only clock.
 */
import type { Pane } from "@tidemark/engine/protocol";
import type { ActiveAlert, AlertEvent, AlertEventKind, AlertRuleCounts, AlertsView } from "../../protocol/alerts.js";
import { DEFAULT_LOOKBACK_MS, type Queryable } from "../promql/index.js";
import type { AlertRule } from "./alert-text.js";
import { PaneLedger } from "./pane-ledger.js";
import { RuleRun, type AlertListener, type AlertNotice } from "./rule-run.js";

/** Windows kept per scope, at least: covers the late and final panes of ordinary graces. */
const MIN_KEEP_MS = 15 * 60_000;

export interface AlertBookOptions {
  /** The dashboard's URL as users reach it: alerts link there. */
  readonly dashboardUrl: string;
  /** History entries kept (newest first). */
  readonly historySize: number;
}

interface Scope {
  readonly ledger: PaneLedger;
  readonly runs: RuleRun[];
  readonly keepMs: number;
  /** Window ends whose panes changed since the last flush. */
  readonly dirty: Set<number>;
  swept: boolean;
}

export class AlertBook {
  private readonly scopes: Scope[] = [];
  private readonly history: AlertEvent[] = [];
  private changed = false;

  constructor(
    rules: readonly AlertRule[],
    private readonly opts: AlertBookOptions,
    private readonly listener: AlertListener,
  ) {
    const byScope = new Map<string, AlertRule[]>();
    for (const r of rules) {
      const key = `${r.shape.policy}\u0000${r.shape.windowMs}\u0000${r.shape.sessions}`;
      byScope.set(key, [...(byScope.get(key) ?? []), r]);
    }
    for (const list of byScope.values()) this.scopes.push(this.scopeOf(list));
  }

  /** True when no rule is configured. */
  get empty(): boolean {
    return this.scopes.length === 0;
  }

  /** Takes a pane; true when a flush has work. */
  offer(pane: Pane): boolean {
    let work = false;
    for (const s of this.scopes) {
      if (!s.ledger.covers(pane)) continue;
      const before = s.ledger.newestEnd;
      const end = s.ledger.apply(pane);
      if (s.ledger.newestEnd !== before) s.swept = false;
      if (end === undefined) continue;
      s.dirty.add(end);
      // Range functions read back: later windows within the longest range see this one too.
      const range = Math.max(0, ...s.runs.map((r) => r.rule.shape.rangeMs));
      for (const e of s.ledger.ends()) if (e > end && e < end + range) s.dirty.add(e);
      work = true;
    }
    return work || this.scopes.some((s) => !s.swept);
  }

  /** Reads every rule at its marked windows (oldest first), then ends silent series. */
  flush(source: Queryable): void {
    const before = this.activeCounts();
    for (const s of this.scopes) {
      const ends = [...s.dirty].sort((a, b) => a - b);
      s.dirty.clear();
      for (const run of s.runs) for (const t of ends) run.evaluate(source, s.ledger, t);
      if (s.swept && ends.length === 0) continue;
      for (const run of s.runs) run.sweep(s.ledger, s.keepMs);
      s.swept = true;
    }
    if (this.activeCounts() !== before) this.changed = true;
  }

  /** Firing and pending alerts per rule, as one string. */
  private activeCounts(): string {
    return this.scopes.map((s) => s.runs.map((r) => `${r.counts.firing}/${r.counts.pending}`).join(",")).join(";");
  }

  /** True once since the last call when alerts or history changed. */
  takeChanged(): boolean {
    const c = this.changed;
    this.changed = false;
    return c;
  }

  view(): AlertsView {
    const active: ActiveAlert[] = [];
    for (const s of this.scopes)
      for (const run of s.runs)
        for (const t of run.tracks.values()) {
          const state = t.alert.state;
          if (state === "inactive" || !t.alert.latest) continue;
          active.push({
            ...run.facts(t.alert.latest),
            state,
            activeAt: t.alert.activeAt,
            firedAt: state === "firing" ? t.alert.firedAt : null,
          });
        }
    active.sort((a, b) => (a.state === b.state ? a.activeAt - b.activeAt : a.state === "firing" ? -1 : 1));
    return { active, history: [...this.history], rules: this.counts() };
  }

  /** Per rule: alerts fired, retracted, resolved, and firing and pending now. */
  counts(): AlertRuleCounts[] {
    return this.scopes.flatMap((s) => s.runs.map((r) => ({ ...r.counts })));
  }

  private scopeOf(rules: readonly AlertRule[]): Scope {
    const first = (rules[0] as AlertRule).shape;
    const staleMs = Math.max(DEFAULT_LOOKBACK_MS, first.windowMs);
    const keepMs = Math.max(MIN_KEEP_MS, ...rules.map((r) => r.forMs + r.shape.rangeMs + staleMs + 2 * first.windowMs));
    const listener = this.recording();
    const ledger = new PaneLedger(
      { policy: first.policy, windowMs: first.windowMs, sessions: first.sessions },
      rules.flatMap((r) => r.shape.selects),
      keepMs,
    );
    const runs = rules.map((r) => new RuleRun(r, this.opts.dashboardUrl, staleMs, listener));
    return { ledger, runs, keepMs, dirty: new Set(), swept: true };
  }

  /** The listener, with the history and change flag kept on the way (SLO alerts go through it too). */
  recording(): AlertListener {
    const note = (n: AlertNotice, event: AlertEventKind, at: number, reason: string): void => {
      const { startsAt: _startsAt, ...facts } = n;
      this.history.unshift({ ...facts, event, at, reason });
      if (this.history.length > this.opts.historySize) this.history.length = this.opts.historySize;
      this.changed = true;
    };
    return {
      fired: (n) => {
        note(n, "fired", n.startsAt, n.annotations["summary"] ?? "");
        this.listener.fired(n);
      },
      updated: (n) => {
        this.changed = true;
        this.listener.updated(n);
      },
      ended: (n, how, endsAt, reason) => {
        note(n, how, endsAt, reason);
        this.listener.ended(n, how, endsAt, reason);
      },
    };
  }
}
