/**
 * The alerts' Prometheus metrics on the dashboard's /metrics (docs/operations.md, "Alerts"): per
 * rule, alerts fired, retracted and resolved and those active; per Alertmanager, what delivery did.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { AlertRuleCounts } from "../../protocol/alerts.js";
import type { TargetCounters } from "./alertmanager-target.js";

export function alertMetrics(registry: Registry, alertnames: readonly string[], alertmanagers: readonly string[]) {
  const registers = [registry];
  const fired = new Counter({
    name: "tidemark_alerts_fired_total",
    help: "Alerts that fired (an alert raised on an early pane counts when it fires)",
    labelNames: ["alertname"],
    registers,
  });
  const retracted = new Counter({
    name: "tidemark_alerts_retracted_total",
    help: "Firing alerts retracted: the on-time or final panes of the windows that raised them do not cross the threshold",
    labelNames: ["alertname"],
    registers,
  });
  const resolved = new Counter({
    name: "tidemark_alerts_resolved_total",
    help: "Firing alerts resolved: a newer settled pane does not cross the threshold, or the series went silent",
    labelNames: ["alertname"],
    registers,
  });
  const active = new Gauge({
    name: "tidemark_alerts_active",
    help: "Alerts active now, by state (pending: waiting for the rule's for; firing)",
    labelNames: ["alertname", "state"],
    registers,
  });
  const sent = new Counter({
    name: "tidemark_alerts_notifications_sent_total",
    help: "Alerts (firing or resolved) accepted by an Alertmanager",
    labelNames: ["alertmanager"],
    registers,
  });
  const errors = new Counter({
    name: "tidemark_alerts_notification_errors_total",
    help: "Requests to an Alertmanager that failed (no answer, or an HTTP error)",
    labelNames: ["alertmanager"],
    registers,
  });
  const dropped = new Counter({
    name: "tidemark_alerts_notifications_dropped_total",
    help: "Alerts dropped because an Alertmanager's queue was full",
    labelNames: ["alertmanager"],
    registers,
  });
  const queued = new Gauge({
    name: "tidemark_alerts_notification_queue_length",
    help: "Alerts waiting to be sent to an Alertmanager",
    labelNames: ["alertmanager"],
    registers,
  });
  for (const alertname of alertnames) {
    for (const c of [fired, retracted, resolved]) c.inc({ alertname }, 0);
    for (const state of ["pending", "firing"]) active.set({ alertname, state }, 0);
  }
  for (const alertmanager of alertmanagers) for (const c of [sent, errors, dropped]) c.inc({ alertmanager }, 0);
  const seen = new Map<string, AlertRuleCounts>();
  return {
    /** Moves the counters to the rules' counts (summed over rules of one name). */
    rules(counts: readonly AlertRuleCounts[]): void {
      const sums = new Map<string, AlertRuleCounts>();
      for (const c of counts) {
        const s = sums.get(c.alertname) ?? { ...c, fired: 0, retracted: 0, resolved: 0, firing: 0, pending: 0 };
        for (const k of ["fired", "retracted", "resolved", "firing", "pending"] as const) s[k] += c[k];
        sums.set(c.alertname, s);
      }
      for (const [alertname, s] of sums) {
        const before = seen.get(alertname);
        fired.inc({ alertname }, s.fired - (before?.fired ?? 0));
        retracted.inc({ alertname }, s.retracted - (before?.retracted ?? 0));
        resolved.inc({ alertname }, s.resolved - (before?.resolved ?? 0));
        active.set({ alertname, state: "firing" }, s.firing);
        active.set({ alertname, state: "pending" }, s.pending);
        seen.set(alertname, s);
      }
    },
    /** The delivery counters of one Alertmanager. */
    target(alertmanager: string, onFailure: (reason: string) => void): TargetCounters {
      return {
        sent: (n) => sent.inc({ alertmanager }, n),
        failed: (reason) => {
          errors.inc({ alertmanager });
          onFailure(reason);
        },
        dropped: (n) => dropped.inc({ alertmanager }, n),
        queued: (n) => queued.set({ alertmanager }, n),
      };
    },
  };
}

export type AlertMetrics = ReturnType<typeof alertMetrics>;
