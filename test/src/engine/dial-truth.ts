/**
 * The dial written out from the raw events alone (docs/semantics.md, "Measured bias", "Correlated
 * lateness", "Nowcast"), for an engine fed in arrival order by backfill, whose log time at an event
 * is its own ingest_ts: under an arrival-lag policy an event of window [s, e) is on time while
 * ingest_ts < e + lag (+ grace in final-only mode), kept while ingest_ts < e + lag + grace; the
 * reference keeps what arrived before e + horizon and closes the window at the first input at or
 * after then. No core, aggregate or sketch code: the oracle of the live dial tests.
 */
import type { TelemetryEvent } from "@tidemark/engine/protocol";

export interface Tally {
  count: number;
  errors: number;
}

/** One window of one service: its bounds and its events. */
export interface Cell {
  start: number;
  end: number;
  events: TelemetryEvent[];
}

export interface LagPolicy {
  lagMs: number;
  graceMs: number;
  mode: string;
}

/** Per service, each window's events, windows in order. */
export function cellsOf(events: readonly TelemetryEvent[], sizeMs: number): Map<string, Cell[]> {
  const byWindow = new Map<number, Map<string, TelemetryEvent[]>>();
  for (const e of events) {
    const start = Math.floor(e.ts / sizeMs) * sizeMs;
    const services = byWindow.get(start) ?? byWindow.set(start, new Map()).get(start)!;
    (services.get(e.service) ?? services.set(e.service, []).get(e.service)!).push(e);
  }
  const out = new Map<string, Cell[]>();
  for (const start of [...byWindow.keys()].sort((a, b) => a - b))
    for (const [service, evs] of byWindow.get(start)!)
      (out.get(service) ?? out.set(service, []).get(service)!).push({ start, end: start + sizeMs, events: evs });
  return out;
}

export function tally(events: readonly TelemetryEvent[], keep: (e: TelemetryEvent) => boolean): Tally {
  let count = 0;
  let errors = 0;
  for (const e of events)
    if (keep(e)) {
      count++;
      if (e.status >= 500) errors++;
    }
  return { count, errors };
}

/** Signed shortfall of `v` against the reference `ref`: count in %, error rate in pp. */
export function sample(ref: Tally, v: Tally): { countPct: number; errorRatePp: number | null } {
  return {
    countPct: (100 * (ref.count - v.count)) / ref.count,
    errorRatePp: v.count > 0 ? 100 * (v.errors / v.count - ref.errors / ref.count) : null,
  };
}

/** Mean of the last `n` samples' non-null values (null when none). */
export function meanOfLast(samples: readonly (number | null)[], n: number): number | null {
  const kept = samples.slice(-n).filter((x): x is number => x !== null);
  return kept.length === 0 ? null : kept.reduce((a, b) => a + b, 0) / kept.length;
}

/** The log time an event stops being on time in window `c`. */
export const onTimeLimit = (p: LagPolicy, c: Cell): number =>
  c.end + p.lagMs + (p.mode === "final-only" ? p.graceMs : 0);

/** The log time an event stops being kept at all in window `c`. */
export const finalLimit = (p: LagPolicy, c: Cell): number => c.end + p.lagMs + p.graceMs;

/** What the reference holds of window `c`. */
export const referenceOf = (c: Cell, horizonMs: number): Tally =>
  tally(c.events, (e) => e.ingest_ts < c.end + horizonMs);
