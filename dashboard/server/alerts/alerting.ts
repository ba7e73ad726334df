/**
 * Alert rules on the dashboard server (docs/decisions/0014-alerts.md): every pane the store is
 * offered goes to the alert book; the book is flushed once per burst of panes — FLUSH_AFTER_MS
 * after the first pane a rule reads, the Prometheus series having taken them — so rules are
 * evaluated on pane updates, never by polling. Delivery to the Alertmanagers starts once the
 * replay of TM_PANES has rebuilt the state. The flush timer is injectable (`FlushTimers`), so a
 * test runs each flush itself instead of waiting FLUSH_AFTER_MS of wall time. SLO burn-rate alerts
 * (docs/slo.md) are judged on the same flushes and delivered by the same sender.
 */
import type { Pane } from "@tidemark/engine/protocol";
import type { Logger } from "pino";
import type { AlertsView } from "../../protocol/alerts.js";
import type { FeedState } from "../../protocol/ws-frames.js";
import type { Queryable } from "../promql/index.js";
import { AlertBook } from "../rules/index.js";
import type { BudgetLedger } from "../slo/budget-ledger.js";
import { SloBook } from "../slo/slo-book.js";
import type { SloDefinition } from "../slo/slo-config.js";
import type { SloSeries } from "../slo/slo-series.js";
import { AlertDelivery } from "./alert-delivery.js";
import type { AlertMetrics } from "./alert-metrics.js";
import { AlertmanagerTarget, type Post } from "./alertmanager-target.js";
import type { AlertsConfig } from "./alerts-config.js";

const HISTORY = 200;
/** A burst of panes (a retract and the pane replacing it, a batch) is judged together. */
const FLUSH_AFTER_MS = 20;
const REQUEST_TIMEOUT_MS = 10_000;
/** Retries of a down Alertmanager back off to this at most (or resendEvery when shorter). */
const MAX_BACKOFF_MS = 10_000;

export interface Alerting {
  /** A pane offered to the store. */
  offer(pane: Pane): void;
  /** The TM_PANES feed's state: delivery starts at the first "live". */
  feedChanged(state: FeedState): void;
  view(): AlertsView;
  /** Called (at most once per flush) when the active alerts or the history changed. */
  onChange(fn: () => void): void;
  close(): void;
}

/** Schedules the flush of a burst (the real timers by default). */
export interface FlushTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL_FLUSH_TIMERS: FlushTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout | undefined),
};

/** The SLOs judged beside the rules, and the series they are recorded in (docs/slo.md). */
export interface SloInputs {
  readonly slos: readonly SloDefinition[];
  readonly series: SloSeries | undefined;
  /** The SLOs' budget ledgers (by index), restored before the feed, and the store told after each flush. */
  readonly budget?: { readonly ledgers: readonly BudgetLedger[]; flushed(): void };
}

const NO_SLOS: SloInputs = { slos: [], series: undefined };

export function startAlerting(
  config: AlertsConfig,
  dashboardUrl: string,
  samples: Queryable,
  metrics: AlertMetrics,
  log: Logger,
  timers: FlushTimers = REAL_FLUSH_TIMERS,
  slo: SloInputs = NO_SLOS,
): Alerting {
  const targets = config.alertmanagers.map(
    (url) =>
      new AlertmanagerTarget(
        url,
        { queueSize: config.queueSize, maxBackoffMs: Math.min(config.resendMs, MAX_BACKOFF_MS) },
        httpPost,
        metrics.target(url, (reason) => log.warn({ alertmanager: url, reason }, "alertmanager: delivery failed")),
        { setTimeout: (fn, ms) => setTimeout(fn, ms).unref(), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) },
      ),
  );
  const delivery = new AlertDelivery(targets, config, Date.now, {
    setInterval: (fn, ms) => setInterval(fn, ms).unref(),
    clearInterval: (h) => clearInterval(h as NodeJS.Timeout),
  });
  const book = new AlertBook(config.rules, { dashboardUrl, historySize: HISTORY }, delivery);
  // SLO alerts reach the history, the change flag and delivery through the rule book's recorder.
  const sloBook = new SloBook(slo.slos, dashboardUrl, book.recording(), slo.series, slo.budget?.ledgers);
  const listeners: Array<() => void> = [];
  let scheduled: unknown;
  const flush = (): void => {
    if (scheduled !== undefined) timers.clearTimeout(scheduled);
    scheduled = undefined;
    book.flush(samples);
    const slosRead = sloBook.flush();
    slo.budget?.flushed();
    metrics.rules(book.counts());
    // The SLO panel's readings change at every flush that read one (the frame is throttled by the hub).
    if (book.takeChanged() || slosRead) for (const fn of listeners) fn();
  };
  return {
    offer(pane) {
      // Both books take every pane: no short-circuit.
      const rules = !book.empty && book.offer(pane);
      const slos = !sloBook.empty && sloBook.offer(pane);
      if (!(rules || slos) || scheduled !== undefined) return;
      scheduled = timers.setTimeout(flush, FLUSH_AFTER_MS);
    },
    feedChanged(state) {
      if (state !== "live") return;
      // The replay's last panes are judged before anything is sent.
      if (scheduled !== undefined) flush();
      delivery.start();
    },
    view: () => {
      const v = book.view();
      return sloBook.empty ? v : { ...v, active: [...v.active, ...sloBook.active()], slos: sloBook.views() };
    },
    onChange: (fn) => void listeners.push(fn),
    close: () => {
      if (scheduled !== undefined) timers.clearTimeout(scheduled);
      delivery.close();
    },
  };
}

const httpPost: Post = async (url, body) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  await res.arrayBuffer().catch(() => undefined);
  return res.status;
};
