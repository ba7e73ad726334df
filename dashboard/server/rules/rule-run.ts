/**
 * One alert rule at work: its alert series (one per series of the compared vector that ever
 * crossed), each with its state machine, fed the rule's readings at each window end.
 */
import type { AlertEventKind, AlertFacts, AlertRuleCounts } from "../../protocol/alerts.js";
import { signature, type Queryable } from "../promql/index.js";
import { generatorUrl, panelOf } from "./alert-link.js";
import {
  alertAnnotations,
  alertLabels,
  mayFlip,
  resolvedText,
  retractedText,
  thresholdText,
  type AlertRule,
} from "./alert-text.js";
import type { PaneLedger } from "./pane-ledger.js";
import { readRule, type Reading } from "./rule-reading.js";
import { SeriesAlert, type Transition } from "./series-alert.js";

/** An alert series as it is told to Alertmanager. */
export interface AlertNotice extends AlertFacts {
  /** Log time it fired. */
  readonly startsAt: number;
}

/** What a rule's alerts do, for delivery, counters and history. */
export interface AlertListener {
  fired(n: AlertNotice): void;
  /** A firing alert's annotations changed (a newer pane): resend it with them. */
  updated(n: AlertNotice): void;
  ended(n: AlertNotice, how: Exclude<AlertEventKind, "fired">, endsAt: number, reason: string): void;
}

export interface Track {
  readonly alert: SeriesAlert<Reading>;
  notice: AlertNotice | undefined;
}

export class RuleRun {
  readonly tracks = new Map<string, Track>();
  readonly counts: AlertRuleCounts;
  /** Series without a track: the newest window end where a settled pane did not cross. */
  private readonly quiet = new Map<string, number>();

  constructor(
    readonly rule: AlertRule,
    private readonly dashboardUrl: string,
    private readonly staleMs: number,
    private readonly listener: AlertListener,
  ) {
    this.counts = { alertname: rule.alert, fired: 0, retracted: 0, resolved: 0, firing: 0, pending: 0 };
  }

  /** Reads the rule at window end t and moves its series' states. */
  evaluate(source: Queryable, ledger: PaneLedger, t: number): void {
    for (const r of readRule(this.rule.shape, source, ledger, t)) {
      let track = this.tracks.get(r.signature);
      if (!track) {
        if (!r.crossed) {
          if (r.settled && (this.quiet.get(r.signature) ?? -Infinity) < r.end) this.quiet.set(r.signature, r.end);
          continue;
        }
        if ((this.quiet.get(r.signature) ?? -Infinity) >= r.end) continue;
        this.quiet.delete(r.signature);
        track = { alert: new SeriesAlert<Reading>(this.rule.forMs, this.staleMs), notice: undefined };
        this.tracks.set(r.signature, track);
      }
      this.apply(track, track.alert.record(r));
      if (!track.alert.latest || track.alert.state !== "firing" || !track.notice) continue;
      const next = this.notice(track.alert.latest, track.notice.startsAt);
      if (JSON.stringify(next.annotations) !== JSON.stringify(track.notice.annotations)) {
        track.notice = next;
        this.listener.updated(next);
      }
    }
  }

  /** The scope's clock moved: silent series end; old verdicts and idle series are forgotten. */
  sweep(ledger: PaneLedger, keepMs: number): void {
    const horizon = ledger.newestEnd - keepMs;
    for (const [sig, track] of this.tracks) {
      this.apply(track, track.alert.expire(ledger.newestEnd, ledger.newestEmittedAt));
      track.alert.forgetBefore(horizon);
      if (track.alert.state === "inactive" && track.alert.newestEnd <= horizon) this.tracks.delete(sig);
    }
    for (const [sig, end] of this.quiet) if (end <= horizon) this.quiet.delete(sig);
    this.counts.firing = 0;
    this.counts.pending = 0;
    for (const t of this.tracks.values()) {
      if (t.alert.state === "firing") this.counts.firing++;
      if (t.alert.state === "pending") this.counts.pending++;
    }
  }

  /** The alert's facts at a reading. */
  facts(r: Reading): AlertFacts {
    const shape = this.rule.shape;
    const labels = alertLabels(this.rule, r.labels);
    const service = r.labels["service"] ?? null;
    return {
      fingerprint: signature(labels),
      alertname: this.rule.alert,
      labels,
      annotations: alertAnnotations(this.rule, r),
      policy: shape.policy,
      windowMs: shape.windowMs,
      service,
      panel: panelOf(shape),
      value: r.value,
      paneKind: r.kind,
      threshold: thresholdText(shape),
      mayFlip: mayFlip(shape, r) !== null,
      generatorURL: generatorUrl(this.dashboardUrl, shape, service),
    };
  }

  private notice(r: Reading, startsAt: number): AlertNotice {
    return { ...this.facts(r), startsAt };
  }

  private apply(track: Track, t: Transition<Reading> | undefined): void {
    if (t === undefined || t.kind === "pending") return;
    if (t.kind === "dropped") {
      track.notice = undefined;
      return;
    }
    if (t.kind === "fired") {
      this.counts.fired++;
      track.notice = this.notice(t.verdict, track.alert.firedAt);
      this.listener.fired(track.notice);
      return;
    }
    const base = track.notice ?? this.notice(t.verdict, t.verdict.at);
    const reason =
      t.kind === "retracted" && t.by !== "stale"
        ? retractedText(this.rule, t.verdict, t.by)
        : resolvedText(this.rule, t.by, this.staleMs);
    const ended: AlertNotice = { ...base, annotations: { ...base.annotations, [t.kind]: reason } };
    this.counts[t.kind]++;
    track.notice = undefined;
    this.listener.ended(ended, t.kind, Math.max(t.at, base.startsAt), reason);
  }
}
