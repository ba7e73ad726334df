/**
 * The demo's event model: realistic request telemetry as a pure function of a seed and the
 * times it is asked about. It never reads a clock; the sender passes `now` in and decides
 * when to post each event (at `sendAt`, so late events really arrive late).
 */
import { SEED_DELAY_MIXTURE, isLate, sampleDelay, type DelayMixture } from "./arrival-delay.js";
import { DEMO_CATALOG, pickWeighted, type ServiceSpec } from "./catalog.js";
import {
  DEFAULT_INCIDENT_RATES,
  advanceIncidents,
  calmService,
  errorRateAt,
  latencyFactor,
  type IncidentRates,
  type ServiceIncidents,
} from "./incidents.js";
import { Prng } from "./prng.js";
import { Sessions } from "./sessions.js";

/** An event as a client posts it to `POST /v1/events` (ingest stamps ingest_ts). */
export interface DemoEvent {
  ts: number;
  service: string;
  route: string;
  status: number;
  latency_ms: number;
  user: string;
}

export interface PlannedEvent {
  /** When the sender should post it; `sendAt - event.ts` is its arrival delay. */
  sendAt: number;
  event: DemoEvent;
  /** Arrives 5 s or more after it happened (see isLate), a healed partition's backlog included. */
  late: boolean;
}

export interface DemoModelOptions {
  seed: number;
  /** 0..1: share of late events' (isLate) successes turned into errors: lateness correlated with failure. */
  corr?: number;
  delays?: DelayMixture;
  incidents?: IncidentRates;
  /** Distinct users in the population. */
  users?: number;
  /** Concurrent sessions. */
  sessions?: number;
  catalog?: readonly ServiceSpec[];
}

/** Share of a partitioned service's events held until the partition heals. */
const PARTITION_HELD_SHARE = 0.6;
const ERROR_STATUSES = [500, 500, 500, 502, 503, 504] as const;

export class DemoModel {
  private readonly rng: Prng;
  private readonly corr: number;
  private readonly delays: DelayMixture;
  private readonly rates: IncidentRates;
  private readonly catalog: readonly ServiceSpec[];
  private readonly incidents: ServiceIncidents[];
  private readonly sessions: Sessions;
  private last: number | undefined;

  constructor(opts: DemoModelOptions) {
    if (opts.corr !== undefined && !(opts.corr >= 0 && opts.corr <= 1))
      throw new RangeError(`corr must be within 0..1, got ${opts.corr}`);
    this.rng = new Prng(opts.seed);
    this.corr = opts.corr ?? 0;
    this.delays = opts.delays ?? SEED_DELAY_MIXTURE;
    this.rates = opts.incidents ?? DEFAULT_INCIDENT_RATES;
    this.catalog = opts.catalog ?? DEMO_CATALOG;
    this.incidents = this.catalog.map(() => calmService());
    this.sessions = new Sessions(this.rng, opts.users ?? 5000, opts.sessions ?? 300);
  }

  /** `count` events that happened in (previous call's now, now], with their send times. */
  generate(now: number, count: number): PlannedEvent[] {
    const from = this.last ?? now;
    const elapsed = Math.max(0, now - from);
    this.last = Math.max(now, from);
    for (const s of this.incidents) advanceIncidents(s, this.rates, now, elapsed, this.rng);
    const out: PlannedEvent[] = [];
    for (let i = 0; i < count; i++) out.push(this.one(Math.round(now - this.rng.next() * elapsed)));
    return out;
  }

  private one(ts: number): PlannedEvent {
    const si = this.pickService();
    const spec = this.catalog[si] as ServiceSpec;
    const incidents = this.incidents[si] as ServiceIncidents;
    const route = pickWeighted(spec.routes, this.rng.next());
    let delayMs = sampleDelay(this.delays, this.rng);
    if (ts < incidents.partitionUntil && this.rng.chance(PARTITION_HELD_SHARE))
      delayMs = incidents.partitionUntil - ts + this.rng.exponential(1000);
    delayMs = Math.round(delayMs);
    const late = isLate(this.delays, delayMs);
    const normal = errorRateAt(incidents, ts, route.errorRate);
    const errorP = late ? normal + this.corr * (1 - normal) : normal;
    const error = this.rng.chance(errorP);
    const status = error ? this.rng.pick(ERROR_STATUSES) : this.okStatus();
    const latency =
      status === 504
        ? this.rng.uniform(3000, 10_000)
        : this.rng.lognormal(route.medianMs * latencyFactor(incidents, ts), route.sigma);
    const event: DemoEvent = {
      ts,
      service: spec.service,
      route: route.route,
      status,
      latency_ms: Math.round(latency * 10) / 10,
      user: this.sessions.nextUser(),
    };
    return { sendAt: ts + delayMs, event, late };
  }

  private pickService(): number {
    const spec = pickWeighted(this.catalog, this.rng.next());
    return this.catalog.indexOf(spec);
  }

  private okStatus(): number {
    const u = this.rng.next();
    if (u < 0.9) return 200;
    if (u < 0.95) return 201;
    if (u < 0.98) return 404;
    return 429;
  }
}
