/**
 * What the dashboard server says about its alert rules (docs/websocket-protocol.md, "Alerts"):
 * the active alerts and the recent history, served by `GET /api/alerts` and the `alerts` frame.
 * Times are log time, ms since epoch (docs/decisions/0014-alerts.md).
 */
import type { PaneKind } from "@tidemark/engine/protocol";
import type { SloView } from "./slos.js";

/** The dashboard panel an alert belongs to (the app's panels; absent when none draws its metric). */
export type AlertPanel = "requests" | "errorRate" | "p50" | "p95" | "p99" | "users" | "sessions";

/** What is known of an alert series, active or in the history. */
export interface AlertFacts {
  /** Stable identity of the alert: its sorted labels. */
  fingerprint: string;
  alertname: string;
  /** Every label sent to Alertmanager: alertname, policy, window, service (when the series has one), the rule's labels. */
  labels: Record<string, string>;
  /** Every annotation sent to Alertmanager: the rule's, then value, threshold, pane kind, bias, emit delay, may flip, … */
  annotations: Record<string, string>;
  policy: string;
  windowMs: number;
  service: string | null;
  panel: AlertPanel | null;
  /** The value of the newest pane that counted, and its kind. */
  value: number;
  paneKind: PaneKind;
  /** e.g. "> 0.05". */
  threshold: string;
  /** True when the value moved by the measured bias (and its interval) reaches the other side of the threshold. */
  mayFlip: boolean;
  /** Opens the dashboard on the alert's panel. */
  generatorURL: string;
}

export interface ActiveAlert extends AlertFacts {
  state: "pending" | "firing";
  /** When the condition first held (log time of the pane that made it pending). */
  activeAt: number;
  /** When it fired (log time), or null while pending. */
  firedAt: number | null;
}

/** fired; retracted = ended because the settled panes of the windows that raised it show no crossing; resolved. */
export type AlertEventKind = "fired" | "retracted" | "resolved";

export interface AlertEvent extends AlertFacts {
  event: AlertEventKind;
  /** Log time of the pane that caused it. */
  at: number;
  /** Why, in a sentence (for retracted and resolved: the pane that ended it). */
  reason: string;
}

/** Per rule: how many of its alerts fired, were retracted and were resolved (since the server started). */
export interface AlertRuleCounts {
  alertname: string;
  fired: number;
  retracted: number;
  resolved: number;
  firing: number;
  pending: number;
}

export interface AlertsView {
  active: ActiveAlert[];
  /** Newest first, bounded. */
  history: AlertEvent[];
  rules: AlertRuleCounts[];
  /** The SLOs and their burn rates (absent when none is configured; docs/slo.md, "Dashboard panel"). */
  slos?: SloView[];
}
