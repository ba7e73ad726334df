/**
 * `tidemark load`'s traffic model (docs/operations.md, "`tidemark load`", "Traffic model"): users
 * in sessions on Zipf-popular services, lognormal latency per route, ~1 % errors with bursts of
 * ~20 %, and the seed's lateness (92 % within a second, 8 % up to 30 s), optionally correlated with
 * failure. A pure function of its options and the times it is asked about: it never reads a
 * clock, and the same seed and start give the same events however the time is cut into calls.
 */
import { isLate, sampleDelay } from "../demo/arrival-delay.js";
import type { ServiceSpec } from "../demo/catalog.js";
import type { DemoEvent, PlannedEvent } from "../demo/model.js";
import { Prng } from "../demo/prng.js";
import { ErrorBursts } from "./bursts.js";
import { cumulative, loadCatalog, pickCumulative } from "./catalog.js";
import { LOAD_DELAYS, errorProbability } from "./lateness.js";
import { Population } from "./population.js";
import { sessionShape, type SessionShape } from "./session-shape.js";

export interface LoadModelOptions {
  seed: number;
  /** Wall time of the run's start, ms: the first event happens after it. */
  startMs: number;
  /** Events per second, all services together. */
  rate: number;
  users: number;
  services: number;
  /** Routes per service. */
  routes: number;
  /** 0..1, added to the error probability of late events. */
  corr?: number;
}

const ERROR_STATUSES = [500, 500, 502, 503, 504] as const;

export class LoadModel {
  readonly catalog: readonly ServiceSpec[];
  readonly shape: SessionShape;
  private readonly population: Population;
  private readonly bursts: ErrorBursts;
  private readonly rng: Prng;
  private readonly routeCums: Float64Array[];
  private readonly corr: number;
  private last: number;

  constructor(opts: LoadModelOptions) {
    const corr = opts.corr ?? 0;
    if (!(corr >= 0 && corr <= 1)) throw new RangeError(`corr must be within 0..1, got ${corr}`);
    this.corr = corr;
    this.catalog = loadCatalog(opts.services, opts.routes, opts.seed);
    this.shape = sessionShape(opts.rate, opts.users);
    this.routeCums = this.catalog.map((s) => cumulative(s.routes.map((r) => r.weight)));
    const serviceCum = cumulative(this.catalog.map((s) => s.weight));
    const pickService = (u: number): number => pickCumulative(serviceCum, u);
    this.population = new Population(opts.users, this.shape, pickService, new Prng(opts.seed), opts.startMs);
    this.bursts = new ErrorBursts(this.catalog.length, opts.seed, opts.startMs);
    this.rng = new Prng(opts.seed ^ 0x10ad_e7e7);
    this.last = opts.startMs;
  }

  /** The events that happen in (previous call's until, until], in time order, with their send times. */
  generate(until: number): PlannedEvent[] {
    const out: PlannedEvent[] = [];
    if (until <= this.last) return out;
    this.last = until;
    this.population.take(until, (user, service, at) => out.push(this.event(user, service, Math.floor(at))));
    return out;
  }

  private event(user: number, si: number, ts: number): PlannedEvent {
    const rng = this.rng;
    const spec = this.catalog[si] as ServiceSpec;
    const route = spec.routes[pickCumulative(this.routeCums[si] as Float64Array, rng.next())] ?? spec.routes[0];
    if (route === undefined) throw new RangeError(`service ${spec.service} has no routes`);
    const delayMs = Math.round(sampleDelay(LOAD_DELAYS, rng));
    const late = isLate(LOAD_DELAYS, delayMs);
    const normal = Math.max(route.errorRate, this.bursts.errorRateAt(si, ts));
    const error = rng.chance(errorProbability(normal, late, this.corr));
    const status = error ? rng.pick(ERROR_STATUSES) : okStatus(rng.next());
    const latency = status === 504 ? rng.uniform(3000, 10_000) : rng.lognormal(route.medianMs, route.sigma);
    const event: DemoEvent = {
      ts,
      service: spec.service,
      route: route.route,
      status,
      latency_ms: Math.round(latency * 10) / 10,
      user: `user-${user.toString(36)}`,
    };
    return { sendAt: ts + delayMs, event, late };
  }
}

function okStatus(u: number): number {
  if (u < 0.9) return 200;
  if (u < 0.95) return 201;
  if (u < 0.97) return 204;
  return 404;
}
