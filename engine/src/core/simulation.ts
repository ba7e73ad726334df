/**
 * The seed's stream (its Block 1 generator) as a recording: event times uniform over the span,
 * delays a mixture — (1 − tail) exponential around meanDelay, tail uniform in [0, tailMax) —
 * services uniform, 2% errors plus `corr` extra error probability for tail events (lateness
 * correlated with failure). Sorted by ingest_ts. Pure and deterministic for a seed.
 */
import type { TelemetryEvent } from "../protocol.js";
import { Prng } from "./prng.js";

export interface SimulationOptions {
  seed: number;
  events: number;
  spanMs: number;
  services: number;
  tail: number;
  meanDelayMs: number;
  tailMaxMs: number;
  corr: number;
  /** First event time (ms since epoch); window aligned by default. */
  startMs: number;
  /** Distinct routes per service. */
  routes: number;
  /** Distinct users overall. */
  users: number;
}

/** 2026-01-01T00:00:00Z: aligned to every usual window size. */
export const SIMULATION_START_MS = 1_767_225_600_000;

export const DEFAULT_SIMULATION: Readonly<SimulationOptions> = Object.freeze({
  seed: 1,
  events: 20_000,
  spanMs: 600_000,
  services: 4,
  tail: 0.08,
  meanDelayMs: 2_000,
  tailMaxMs: 90_000,
  corr: 0,
  startMs: SIMULATION_START_MS,
  routes: 5,
  users: 500,
});

const ROUTES = ["GET /api/items", "POST /api/orders", "GET /api/items/:id", "GET /health", "PUT /api/cart"];
const BASE_ERROR_RATE = 0.02;

/** Service names: a, b, c, … z, s26, s27, … */
export function serviceName(i: number): string {
  return i < 26 ? String.fromCharCode(97 + i) : `s${i}`;
}

function routeName(i: number): string {
  return ROUTES[i] ?? `GET /api/r${i}`;
}

export function simulate(options: Partial<SimulationOptions> = {}): TelemetryEvent[] {
  const o = { ...DEFAULT_SIMULATION, ...options };
  const rng = new Prng(o.seed);
  const out: TelemetryEvent[] = [];
  for (let i = 0; i < o.events; i++) {
    const ts = o.startMs + Math.floor(rng.next() * o.spanMs);
    const isTail = rng.next() < o.tail;
    const delay = Math.floor(isTail ? rng.next() * o.tailMaxMs : rng.exponential(o.meanDelayMs));
    const failed = rng.next() < BASE_ERROR_RATE + (isTail ? o.corr : 0);
    const latency = Math.round(Math.exp(Math.log(40) + 0.7 * rng.normal()) * (failed ? 3 : 1) * 10) / 10;
    out.push({
      ts,
      ingest_ts: ts + delay,
      service: serviceName(rng.int(o.services)),
      route: routeName(rng.int(o.routes)),
      status: failed ? (rng.next() < 0.5 ? 500 : 503) : 200,
      latency_ms: latency,
      user: `u${rng.int(o.users)}`,
    });
  }
  // Stable: equal ingest_ts keep generation order.
  return out
    .map((e, i) => ({ e, i }))
    .sort((x, y) => x.e.ingest_ts - y.e.ingest_ts || x.i - y.i)
    .map((x) => x.e);
}

/** One service whose late events fail far more often (docs/semantics.md, "Correlated lateness"). */
export interface CorrelatedFailures {
  /** The service whose delayed events fail more often. */
  service: string;
  /** Events of it delayed (ingest_ts − ts) by at least this much fail with `failRate`. */
  minDelayMs: number;
  failRate: number;
  seed: number;
}

/**
 * `events` with the failures of one service's delayed events redrawn at `failRate` (a second PRNG,
 * so the arrival pattern is the simulation's own). The others keep the base error rate.
 */
export function withCorrelatedFailures(events: readonly TelemetryEvent[], c: CorrelatedFailures): TelemetryEvent[] {
  const rng = new Prng(c.seed);
  return events.map((e) => {
    if (e.service !== c.service || e.ingest_ts - e.ts < c.minDelayMs) return e;
    return { ...e, status: rng.next() < c.failRate ? 503 : 200 };
  });
}
