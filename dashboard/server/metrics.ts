import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import type { FeedState } from "../protocol/ws-frames.js";

const FEED_STATES: readonly FeedState[] = ["connecting", "waiting-for-stream", "replaying", "live", "disconnected"];

/** The dashboard's Prometheus metrics, on a registry of its own (several servers per process in tests). */
export function dashboardMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tidemark_dashboard_" });
  // The nodejs_active_*_total sums are gauges named like counters (promtool check metrics warns, docs/operations.md,
  // "Metrics"): dropped; the per-type nodejs_active_* gauges they sum stay.
  for (const what of ["handles", "requests", "resources"])
    registry.removeSingleMetric(`tidemark_dashboard_nodejs_active_${what}_total`);
  const m = {
    registry,
    clients: new Gauge({
      name: "tidemark_dashboard_clients",
      help: "Connected WebSocket clients",
      registers: [registry],
    }),
    framesSent: new Counter({
      name: "tidemark_dashboard_frames_sent_total",
      help: "WebSocket frames sent",
      registers: [registry],
    }),
    panesSent: new Counter({
      name: "tidemark_dashboard_panes_sent_total",
      help: "Panes sent over WebSocket (all clients)",
      registers: [registry],
    }),
    earlyCoalesced: new Counter({
      name: "tidemark_dashboard_early_panes_coalesced_total",
      help: "Queued early panes replaced by a newer pane of the same id (slow clients)",
      registers: [registry],
    }),
    earlyDropped: new Counter({
      name: "tidemark_dashboard_early_panes_dropped_total",
      help: "Early panes dropped because a slow client's early buffer was full",
      registers: [registry],
    }),
    slowDisconnects: new Counter({
      name: "tidemark_dashboard_slow_client_disconnects_total",
      help: "Clients disconnected for falling too far behind on must-deliver panes",
      registers: [registry],
    }),
    wsLimited: new Counter({
      name: "tidemark_dashboard_ws_limited_total",
      help: "WebSocket connections or frames refused by a limit (docs/security.md), by limit",
      labelNames: ["limit"],
      registers: [registry],
    }),
    wsAuthFailures: new Counter({
      name: "tidemark_dashboard_ws_auth_failures_total",
      help: "WebSocket connections closed for a missing or wrong read token in the first frame",
      registers: [registry],
    }),
    feedSkipped: new Counter({
      name: "tidemark_dashboard_pane_feed_skipped_total",
      help: 'TM_PANES messages whose body does not decode (what="body") and lines that are not panes (what="line"), skipped and logged',
      labelNames: ["what"],
      registers: [registry],
    }),
    hostRejected: new Counter({
      name: "tidemark_dashboard_host_rejected_total",
      help: "HTTP requests refused for a Host not allowed without a read token (DNS rebinding)",
      registers: [registry],
    }),
    promQueriesLimited: new Counter({
      name: "tidemark_dashboard_prom_queries_limited_total",
      help: 'Prometheus API queries stopped or refused by a query limit (docs/prometheus-api.md, "Query limits"), by limit',
      labelNames: ["limit"],
      registers: [registry],
    }),
    promQueriesRunning: new Gauge({
      name: "tidemark_dashboard_prom_queries_running",
      help: "Prometheus API queries being evaluated",
      registers: [registry],
    }),
    promQueriesQueued: new Gauge({
      name: "tidemark_dashboard_prom_queries_queued",
      help: "Prometheus API queries waiting for a slot (queryMaxConcurrency)",
      registers: [registry],
    }),
    panesApplied: new Counter({
      name: "tidemark_dashboard_panes_applied_total",
      help: "Panes from TM_PANES stored as the newest of their id",
      registers: [registry],
    }),
    panesIgnored: new Counter({
      name: "tidemark_dashboard_panes_ignored_total",
      help: "Panes from TM_PANES ignored: a same or later seq of the id was held (replay, out of order)",
      registers: [registry],
    }),
    storedPanes: new Gauge({
      name: "tidemark_dashboard_stored_panes",
      help: "Panes held (latest per id)",
      registers: [registry],
    }),
    feedState: new Gauge({
      name: "tidemark_dashboard_feed_state",
      help: "1 for the current TM_PANES feed state",
      labelNames: ["state"],
      registers: [registry],
    }),
  };
  return {
    ...m,
    setFeedState(state: FeedState): void {
      for (const s of FEED_STATES) m.feedState.set({ state: s }, s === state ? 1 : 0);
    },
  };
}

export type DashboardMetrics = ReturnType<typeof dashboardMetrics>;
