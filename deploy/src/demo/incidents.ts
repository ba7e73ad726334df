/**
 * What goes wrong in the demo's system, per service and over time: slow spells (latency × k),
 * error bursts (error rate jumps), and network partitions whose backlog is dumped when the
 * partition heals (the late tail's "a partition heals" case). Pure: time is passed in.
 */
import type { Prng } from "./prng.js";

export interface IncidentRates {
  /** Expected slow spells per service per hour. */
  slowPerHour: number;
  /** Expected error bursts per service per hour. */
  burstsPerHour: number;
  /** Expected network partitions per service per hour. */
  partitionsPerHour: number;
}

export const DEFAULT_INCIDENT_RATES: IncidentRates = { slowPerHour: 20, burstsPerHour: 15, partitionsPerHour: 4 };

/** The state of one service at one moment. */
export interface ServiceIncidents {
  slowUntil: number;
  slowFactor: number;
  burstUntil: number;
  burstErrorRate: number;
  /** While a partition lasts, part of the service's events are held until it heals. */
  partitionUntil: number;
}

const HOUR_MS = 3_600_000;

export function calmService(): ServiceIncidents {
  return { slowUntil: 0, slowFactor: 1, burstUntil: 0, burstErrorRate: 0, partitionUntil: 0 };
}

/** Starts new incidents for `elapsedMs` ending at `now`, each as a Poisson arrival. */
export function advanceIncidents(
  s: ServiceIncidents,
  rates: IncidentRates,
  now: number,
  elapsedMs: number,
  rng: Prng,
): void {
  const hours = elapsedMs / HOUR_MS;
  if (now >= s.slowUntil && rng.chance(rates.slowPerHour * hours)) {
    s.slowUntil = now + rng.uniform(15_000, 45_000);
    s.slowFactor = rng.uniform(3, 7);
  }
  if (now >= s.burstUntil && rng.chance(rates.burstsPerHour * hours)) {
    s.burstUntil = now + rng.uniform(8_000, 30_000);
    s.burstErrorRate = rng.uniform(0.15, 0.45);
  }
  if (now >= s.partitionUntil && rng.chance(rates.partitionsPerHour * hours)) {
    s.partitionUntil = now + rng.uniform(20_000, 60_000);
  }
}

export function latencyFactor(s: ServiceIncidents, ts: number): number {
  return ts < s.slowUntil ? s.slowFactor : 1;
}

export function errorRateAt(s: ServiceIncidents, ts: number, normal: number): number {
  return ts < s.burstUntil ? Math.max(normal, s.burstErrorRate) : normal;
}
