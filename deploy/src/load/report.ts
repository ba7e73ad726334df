/**
 * What `tidemark load` prints (docs/operations.md, "`tidemark load`", "Output"): a progress
 * line on stderr about every second, a human summary on stderr at the end, and one machine line
 * on stdout, `tidemark load done {json}`. Pure formatting.
 */
import type { WorkerLag } from "./lag-tracker.js";

export const DONE_PREFIX = "tidemark load done ";

/** Counters of a run. Every generated event ends in exactly one of accepted, rejected, refused, shed, unsent. */
export interface LoadCounters {
  generated: number;
  /** Generated to arrive 1 s or more after it happened. */
  late: number;
  /** Stored by ingest (not named among a 2xx answer's rejected records). */
  accepted: number;
  /** Named as rejected in a 2xx answer. */
  rejected: number;
  /** In batches refused with a 4xx (400, 413, …): not stored. */
  refused: number;
  /** Dropped because too many events waited for a sender. */
  shed: number;
  /** Still unacknowledged when the run gave up waiting at the end. */
  unsent: number;
  /** HTTP requests answered, retries included. */
  posts: number;
  http4xx: number;
  http5xx: number;
  /** Attempts after the first (after a 429, a 5xx or no answer). */
  retries: number;
  /** Attempts that got no answer (refused, reset, timed out). */
  connectionErrors: number;
}

export function emptyCounters(): LoadCounters {
  return {
    generated: 0,
    late: 0,
    accepted: 0,
    rejected: 0,
    refused: 0,
    shed: 0,
    unsent: 0,
    posts: 0,
    http4xx: 0,
    http5xx: 0,
    retries: 0,
    connectionErrors: 0,
  };
}

export interface Progress {
  elapsedMs: number;
  rate: number;
  /** Accepted per second since the previous progress line. */
  acceptedPerSec: number;
  accepted: number;
  /** Batches being posted or waiting to be resent. */
  inFlight: number;
  /** Events in batches waiting for a sender. */
  queued: number;
  /** Events held back in the delay queue until their send time. */
  held: number;
  retries: number;
  shed: number;
  lag: WorkerLag | undefined;
}

export function progressLine(p: Progress): string {
  const lag = p.lag?.p99 == null ? "" : ` lag_p99=${Math.round(p.lag.p99)}ms`;
  return (
    `t=${(p.elapsedMs / 1000).toFixed(1)}s target=${p.rate}/s accepted=${Math.round(p.acceptedPerSec)}/s ` +
    `total=${p.accepted} inflight=${p.inFlight} queued=${p.queued} held=${p.held} retries=${p.retries} shed=${p.shed}${lag}`
  );
}

/** The JSON of the `tidemark load done` line. */
export interface DoneRecord extends LoadCounters {
  rate: number;
  durationMs: number;
  /** From the start to the last answer (the end-of-run flush included). */
  elapsedMs: number;
  acceptedPerSec: number;
  httpP50Ms: number | null;
  httpP99Ms: number | null;
  /** The worst worker's latest pipeline lag (tm.status), null without --nats or before any status. */
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  lagWorker: string | null;
  /** The largest p99 any worker reported during the run. */
  lagMaxP99Ms: number | null;
  /** False when ingest's answers did not name every rejected record (see the ledger's `exact`). */
  exact: boolean;
}

export function doneLine(d: DoneRecord): string {
  return DONE_PREFIX + JSON.stringify(d);
}

const ms = (v: number | null): string => (v === null ? "n/a" : `${v.toFixed(1)} ms`);

/** The human summary; `natsGiven`: whether tm.status was listened to. */
export function summaryLines(d: DoneRecord, natsGiven: boolean): string[] {
  const lines = [
    `done in ${(d.elapsedMs / 1000).toFixed(1)} s: ${d.accepted} events accepted, ${Math.round(d.acceptedPerSec)}/s ` +
      `(target ${d.rate}/s for ${(d.durationMs / 1000).toFixed(1)} s); ${d.generated} generated, ${d.late} of them late`,
    `  not stored: ${d.rejected} rejected by ingest, ${d.refused} in refused batches, ${d.shed} shed, ${d.unsent} unsent`,
    `  HTTP: ${d.posts} POSTs, latency p50 ${ms(d.httpP50Ms)} p99 ${ms(d.httpP99Ms)}; ` +
      `4xx ${d.http4xx}, 5xx ${d.http5xx}, retries ${d.retries} (${d.connectionErrors} without an answer)`,
  ];
  lines.push(
    d.lagWorker === null
      ? `  engine pipeline lag: n/a (${natsGiven ? "no engine published tm.status during the run" : "pass --nats URL to read tm.status"})`
      : `  engine pipeline lag: p50 ${ms(d.lagP50Ms)}, p99 ${ms(d.lagP99Ms)} (worst worker ${d.lagWorker}, latest); ` +
          `max p99 seen ${ms(d.lagMaxP99Ms)}`,
  );
  if (d.shed > 0)
    lines.push(`  ingest did not keep up: ${d.shed} events were shed (see "Shedding" in docs/operations.md)`);
  if (!d.exact) lines.push("  ingest's answers did not name every rejected record: the ledger is not exact");
  return lines;
}

export interface DoneInput {
  counters: LoadCounters;
  rate: number;
  durationMs: number;
  elapsedMs: number;
  /** Per-POST latency quantiles (ms), null when nothing was answered. */
  http: { p50: number; p99: number } | null;
  lag: { worst: WorkerLag | undefined; maxP99: number | null } | undefined;
  exact: boolean;
}

export function doneRecord(i: DoneInput): DoneRecord {
  const round = (v: number | null | undefined): number | null => (v == null ? null : Math.round(v * 10) / 10);
  return {
    ...i.counters,
    rate: i.rate,
    durationMs: i.durationMs,
    elapsedMs: i.elapsedMs,
    acceptedPerSec: Math.round((i.counters.accepted * 1000) / Math.max(1, i.elapsedMs)),
    httpP50Ms: round(i.http?.p50),
    httpP99Ms: round(i.http?.p99),
    lagP50Ms: round(i.lag?.worst?.p50),
    lagP99Ms: round(i.lag?.worst?.p99),
    lagWorker: i.lag?.worst?.worker ?? null,
    lagMaxP99Ms: round(i.lag?.maxP99),
    exact: i.exact,
  };
}
