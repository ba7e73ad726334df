/**
 * `npm run bench -w engine`: core throughput on decoded records (no JSON), policy-count
 * independence, speed-up over the seed's reference loop, heap bytes per open (window, key).
 * Prints a table and rewrites engine/BENCHMARKS.md. Ratios are measured in the same run.
 */
import {
  createCore,
  defaultCoreConfig,
  simulate,
  validateCoreConfig,
  type CoreConfig,
  type CoreOutput,
  type PolicyConfig,
  type StreamCore,
} from "../core/index.js";
import { decodeEventBatch, encodeEventBatch, partitionOf, type PaneValue, type TelemetryEvent } from "../protocol.js";
import type { Aggregate, AggregateKind } from "../core/windows/aggregate.js";
import type { RequestInput } from "@tidemark/sketches";
import { EventTimeCore } from "../core/stream-core.js";
import type { CoreOptions } from "../core/create-core.js";
import { report, type HeapPerKey, type Measured, type Timing } from "./core-report.js";
import { gc, memoryInUse } from "./heap.js";
import { referenceLoop } from "./reference-loop.js";
import { openWindowKeys } from "./window-keys.js";

const EVENTS = Number(process.env.TM_BENCH_EVENTS ?? 250_000);
const REPEATS = 3;
/** Event-time spans: 250k events over 5 s (50k events per second of log time, a busy system) and
 * over 25 s (10k/s: five times the panes per event, since panes are per key and second). */
const SPAN_MS = 5_000;
const SPARSE_SPAN_MS = 25_000;
/** Steady state: the same events over 5 min, so 60 s windows span all their slices. */
const STEADY_SPAN_MS = 300_000;
/** A grid per window config (docs/decisions/0022-sliced-windows.md): the baseline of shared slices. */
const OWN_GRIDS: CoreOptions = { sharedSlices: false };

function simulated(n: number, spanMs: number): TelemetryEvent[] {
  return simulate({ seed: 1, events: n, spanMs, services: 20, routes: 20, users: 20_000 });
}

/**
 * The events as the runtime hands them to the core: through TM_EVENTS' wire format (NDJSON
 * batches of 500, decoded with decodeEventBatch), so their strings and memory layout are those of
 * decoded records. simulate()'s own objects differ: routes are fresh concatenated strings and the
 * objects sit in generation order, not arrival order — the "undecoded" row measures that input.
 */
function stream(n: number, spanMs: number): TelemetryEvent[] {
  const events = simulated(n, spanMs);
  const out: TelemetryEvent[] = [];
  for (let i = 0; i < events.length; i += 500)
    for (const e of decodeEventBatch(encodeEventBatch(events.slice(i, i + 500)))) out.push(e);
  return out;
}

/** Counts and errors only: what the core costs without the sketches' updates and quantiles. */
class CountAggregate implements Aggregate {
  count = 0;
  errors = 0;
  add(_l: number, error: boolean): void {
    this.count++;
    if (error) this.errors++;
  }
  addInput(input: RequestInput): void {
    this.add(input.latency, input.error);
  }
  merge(o: Aggregate): void {
    this.count += o.count;
    this.errors += o.errors;
  }
  subtract(o: Aggregate): void {
    this.count -= o.count;
    this.errors -= o.errors;
  }
  clone(): Aggregate {
    return Object.assign(new CountAggregate(), this);
  }
  value(): PaneValue {
    return { count: this.count, errors: this.errors, errorRate: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, users: 0 };
  }
  encode(): Uint8Array {
    return new Uint8Array(0);
  }
  encodeInto(use: (buf: Uint8Array, length: number) => void): void {
    use(new Uint8Array(0), 0);
  }
  heapBytes(): number {
    return 0;
  }
  dataBytes(): number {
    return 0;
  }
}
const COUNTS: AggregateKind = {
  create: () => new CountAggregate(),
  decode: () => new CountAggregate(),
  hashUser: () => 0,
};

/**
 * Feeds every event (and finish) into a fresh core once, untimed, then into another, timed; adds the
 * timed run to the best-so-far timing. The untimed run comes after the forced GC, so the timed one
 * starts as a running engine's core runs — its code optimized, the young generation grown to its
 * working size — not as right after a full GC, which shrinks the young generation (the "timed cold"
 * row prints that run beside this one).
 */
function runOnce(
  events: readonly TelemetryEvent[],
  parts: readonly number[],
  config: CoreConfig,
  kind: AggregateKind | undefined,
  t: Timing,
  options?: CoreOptions,
  cold = false,
): void {
  gc();
  const fresh = (): StreamCore =>
    kind ? new EventTimeCore(validateCoreConfig(config), kind) : createCore(config, options);
  if (!cold) feed(fresh(), events, parts, { pane: () => {}, late: () => {} });
  const core = fresh();
  let n = 0;
  const out = { pane: () => void n++, late: () => {} };
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  feed(core, events, parts, out);
  t.ns = Math.min(t.ns, Number(process.hrtime.bigint() - t0) / events.length);
  const c = process.cpuUsage(c0);
  t.cpuNs = Math.min(t.cpuNs, ((c.user + c.system) * 1000) / events.length);
  t.panes = n;
}

function feed(core: StreamCore, events: readonly TelemetryEvent[], parts: readonly number[], out: CoreOutput): void {
  for (let i = 0; i < events.length; i++) core.event(parts[i] as number, events[i] as TelemetryEvent, out);
  core.finish(out);
}

/**
 * Best of N runs per configuration, the configurations interleaved (A B C, A B C, …) so that a
 * change of load on this shared machine hits each of them alike and their ratios stay fair.
 */
function coreNs(
  events: readonly TelemetryEvent[],
  runs: readonly [CoreConfig, AggregateKind?, CoreOptions?, boolean?][],
): Timing[] {
  const parts = events.map((e) => partitionOf(e.service, runs[0]?.[0].partitions ?? 8));
  const timings = runs.map((): Timing => ({ ns: Infinity, cpuNs: Infinity, panes: 0 }));
  for (let r = 0; r < REPEATS; r++)
    runs.forEach(([config, kind, options, cold], i) =>
      runOnce(events, parts, config, kind, timings[i] as Timing, options, cold),
    );
  return timings;
}

function withPolicies(n: number): CoreConfig {
  const policies: PolicyConfig[] = Array.from({ length: n }, (_, i) => ({
    name: `p${i}`,
    label: `p${i}`,
    watermark: { kind: "arrival-lag", lagMs: 1000 + 2500 * i },
    graceMs: (i % 3) * 10_000,
    earlyEveryMs: null,
    lateEveryMs: null,
    mode: "final-only",
  }));
  return validateCoreConfig({ ...defaultCoreConfig(), policies });
}

/** What the seed's loop computes — final counts of dashboard, alerting, billing on 60 s windows — in the core. */
function seedLike(): CoreConfig {
  const d = defaultCoreConfig();
  return validateCoreConfig({
    ...d,
    windows: ["60s"],
    policies: d.policies.map((p) => ({ ...p, earlyEveryMs: null, lateEveryMs: null, mode: "final-only" })),
  });
}

function referenceNs(events: readonly TelemetryEvent[]): Timing {
  const policies = defaultCoreConfig().policies.map((p) => [
    p.watermark.kind === "percentile" ? 0 : p.watermark.lagMs,
    p.graceMs,
  ]);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (const [lag, grace] of policies) referenceLoop(events, lag as number, 60_000, grace as number);
  const c = process.cpuUsage(c0);
  return {
    ns: Number(process.hrtime.bigint() - t0) / events.length,
    cpuNs: ((c.user + c.system) * 1000) / events.length,
    panes: 0,
  };
}

/** Gc'd memory delta of a core fed `events` (the events themselves allocated before), per open (window, key). */
function heapPerKey(events: readonly TelemetryEvent[], config: CoreConfig, options?: CoreOptions): HeapPerKey {
  gc();
  gc();
  const before = memoryInUse();
  const core = createCore(config, options) as EventTimeCore;
  const out = { pane: () => {}, late: () => {} };
  for (const e of events) core.event(partitionOf(e.service, config.partitions), e, out);
  gc();
  gc();
  const after = memoryInUse();
  const keys = openWindowKeys(core);
  return { bytes: (after - before) / keys, keys, reported: core.status().stateBytes / keys };
}

const SINGLE_KEYS = 100_000;

/** 100k services with one request each over 4 s (serviceCap raised to hold them): a key with a single event. */
function singleEventKeys(): { events: TelemetryEvent[]; config: CoreConfig } {
  const t0 = 1_767_225_600_000;
  const events = Array.from({ length: SINGLE_KEYS }, (_, i): TelemetryEvent => {
    const t = t0 + Math.floor((i * 4000) / SINGLE_KEYS);
    return {
      ts: t,
      ingest_ts: t,
      service: `svc-${i}`,
      route: "/",
      status: 200,
      latency_ms: 1 + (i % 100),
      user: `u${i % 1000}`,
    };
  });
  return { events, config: validateCoreConfig({ ...defaultCoreConfig(), serviceCap: 1_000_000 }) };
}

function measure(): Measured {
  // One stream of events alive at a time: a bench holding several would make every major GC in a
  // timed run mark them all (a core in the runtime holds only the batches in flight).
  const [sparseDef, sparseOne, sparseTwelve] = coreNs(stream(EVENTS, SPARSE_SPAN_MS), [
    [defaultCoreConfig()],
    [withPolicies(1)],
    [withPolicies(12)],
  ]) as [Timing, Timing, Timing];
  const events = stream(EVENTS, SPAN_MS);
  const [def, cold, ownGrids, counts, one, twelve] = coreNs(events, [
    [defaultCoreConfig()],
    [defaultCoreConfig(), undefined, undefined, true],
    [defaultCoreConfig(), undefined, OWN_GRIDS],
    [defaultCoreConfig(), COUNTS],
    [withPolicies(1)],
    [withPolicies(12)],
  ]) as [Timing, Timing, Timing, Timing, Timing, Timing];
  const [steady, steadyOwnGrids] = coreNs(stream(EVENTS, STEADY_SPAN_MS), [
    [defaultCoreConfig()],
    [defaultCoreConfig(), undefined, OWN_GRIDS],
  ]) as [Timing, Timing];
  const [undecoded] = coreNs(simulated(EVENTS, SPAN_MS), [[defaultCoreConfig()]]) as [Timing];
  // The reference rescans every (window, service) it has ever seen on every event; over an hour of
  // event time (60 windows × 20 services) that is what a brute-force loop costs.
  const small = simulate({ seed: 2, events: 50_000, spanMs: 3_600_000, services: 20, routes: 20, users: 20_000 });
  const [coreSmall, coreSeedLike] = coreNs(small, [[defaultCoreConfig()], [seedLike()]]) as [Timing, Timing];
  const heap = heapPerKey(events.slice(0, 200_000), defaultCoreConfig());
  const heapOwnGrids = heapPerKey(events.slice(0, 200_000), defaultCoreConfig(), OWN_GRIDS);
  const single = singleEventKeys();
  const singleHeap = heapPerKey(single.events, single.config);
  const ref = referenceNs(small);
  return {
    def,
    cold,
    ownGrids,
    steady,
    steadyOwnGrids,
    counts,
    one,
    twelve,
    undecoded,
    sparseDef,
    sparseOne,
    sparseTwelve,
    ref,
    coreSeedLike,
    coreSmall,
    smallEvents: small.length,
    heap,
    heapOwnGrids,
    singleHeap,
  };
}

report(measure(), {
  events: EVENTS,
  spanMs: SPAN_MS,
  sparseSpanMs: SPARSE_SPAN_MS,
  steadySpanMs: STEADY_SPAN_MS,
  repeats: REPEATS,
  singleKeys: SINGLE_KEYS,
});
