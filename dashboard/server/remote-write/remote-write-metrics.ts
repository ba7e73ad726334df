/**
 * The role's metrics, named after Prometheus's own remote-write ones (docs/remote-write.md,
 * "Metrics"), on a registry of its own.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

export function remoteWriteMetrics(queueCapacity: number) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tidemark_remote_write_" });
  // Gauges named like counters (promtool check metrics warns): dropped, as the dashboard does.
  for (const what of ["handles", "requests", "resources"])
    registry.removeSingleMetric(`tidemark_remote_write_nodejs_active_${what}_total`);
  const registers = [registry];
  const m = {
    registry,
    samples: new Counter({
      name: "tidemark_remote_write_samples_total",
      help: "Samples by outcome: sent (accepted by the receiver), failed (refused with a 4xx, not retried), dropped (never sent: older than, or a revision of, a sample already written for the series)",
      labelNames: ["outcome"] as const,
      registers,
    }),
    resentSkipped: new Counter({
      name: "tidemark_remote_write_resent_samples_skipped_total",
      help: "Samples of panes read again (after a restart or an engine replay) equal to the newest written for their series: the receiver holds them already",
      registers,
    }),
    retried: new Counter({
      name: "tidemark_remote_write_samples_retried_total",
      help: "Samples sent again after a 5xx, a 429 or a network error",
      registers,
    }),
    requests: new Counter({
      name: "tidemark_remote_write_requests_total",
      help: "Remote-write requests by answer: the HTTP status code, or 'error' for no answer",
      labelNames: ["code"] as const,
      registers,
    }),
    panes: new Counter({
      name: "tidemark_remote_write_panes_total",
      help: "Panes read from TM_PANES by verdict: settled (written), unsettled (early and other non-settling kinds), discarding or unknown-policy (not written)",
      labelNames: ["verdict"] as const,
      registers,
    }),
    pending: new Gauge({
      name: "tidemark_remote_write_samples_pending",
      help: "Samples queued or in flight",
      registers,
    }),
    capacity: new Gauge({
      name: "tidemark_remote_write_queue_capacity_samples",
      help: "Samples queued before the role stops reading TM_PANES",
      registers,
    }),
    highestSent: new Gauge({
      name: "tidemark_remote_write_highest_sent_timestamp_seconds",
      help: "Newest sample timestamp the receiver accepted, unix seconds",
      registers,
    }),
    highestRead: new Gauge({
      name: "tidemark_remote_write_highest_timestamp_seconds",
      help: "Newest sample timestamp read from TM_PANES, unix seconds",
      registers,
    }),
    series: new Gauge({
      name: "tidemark_remote_write_series",
      help: "Series whose newest written sample is remembered",
      registers,
    }),
    seriesForgotten: new Counter({
      name: "tidemark_remote_write_series_forgotten_total",
      help: "Series forgotten past maxSeries (their order is no longer checked across restarts)",
      registers,
    }),
    batchSeconds: new Histogram({
      name: "tidemark_remote_write_sent_batch_duration_seconds",
      help: "Duration of one remote-write request, seconds",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
  };
  m.capacity.set(queueCapacity);
  for (const outcome of ["sent", "failed", "dropped"]) m.samples.inc({ outcome }, 0);
  return m;
}

export type RemoteWriteMetrics = ReturnType<typeof remoteWriteMetrics>;
