/**
 * Two parts of the core's own work that no layout of it leaves out, measured apart on the held-out
 * events (runtime-budget.ts; docs/decisions/0056-held-out-targets-on-two-cores.md):
 * - **the sketches' updates**: every event added to the aggregates it goes into, one per key
 *   (service, route) and window size (the fed combine, docs/decisions/0050-state-layout.md), at the
 *   configured precisions, each found before timing (no key lookup, no window, no trigger timed);
 * - **the records' binary encoding**: the run's panes and late records written into bodies
 *   (PaneRecords; docs/decisions/0047-binary-panes.md), kept from a run before timing.
 * Each the least CPU of ROUNDS; what the core computes between the two (windows, triggers, dials,
 * pane values) is in neither.
 */
import { HyperLogLog, RequestAggregate, RequestInput } from "@tidemark/sketches";
import type { CoreConfig } from "../core/index.js";
import { routeHllPrecision } from "../core/windows/sketch-aggregate.js";
import { PaneRecords, isError, type LateRecord, type Pane, type TelemetryEvent } from "../protocol.js";
import { feedCore } from "./runtime-baselines.js";

const ROUNDS = 3;

export interface CoreFloor {
  /** CPU of the sketches' updates, ms; and how many aggregates each event goes into. */
  updatesMs: number;
  perEvent: number;
  /** CPU of encoding the run's records, ms; and how many. */
  encodeMs: number;
  records: number;
}

export function coreFloor(
  events: readonly TelemetryEvent[],
  core: CoreConfig,
  endTs: number,
  recordsPerBody: number,
): CoreFloor {
  const sizes = [...new Set(core.windows.map((w) => w.sizeMs))];
  const records: Array<Pane | LateRecord> = [];
  feedCore(events, core, endTs, { pane: (p) => void records.push(p), late: (r) => void records.push(r) });
  let updatesMs = Infinity;
  let encodeMs = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    // Fresh aggregates every round: registers already raised would make a later round cheaper.
    const targets = aggregatesOf(events, core, sizes);
    updatesMs = Math.min(
      updatesMs,
      cpuOf(() => update(events, targets, sizes.length * 2, core.relativeAccuracy)),
    );
    encodeMs = Math.min(
      encodeMs,
      cpuOf(() => encode(records, recordsPerBody)),
    );
  }
  return { updatesMs, perEvent: sizes.length * 2, encodeMs, records: records.length };
}

/** Each event's aggregates, in order: per window size, the service's then the route's. */
function aggregatesOf(
  events: readonly TelemetryEvent[],
  core: CoreConfig,
  sizes: readonly number[],
): RequestAggregate[] {
  const service = { relativeAccuracy: core.relativeAccuracy, hllPrecision: core.hllPrecision };
  const route = { relativeAccuracy: core.relativeAccuracy, hllPrecision: routeHllPrecision(core.hllPrecision) };
  const byKey = new Map<string, RequestAggregate>();
  const get = (key: string, options: typeof service): RequestAggregate => {
    let a = byKey.get(key);
    if (a === undefined) byKey.set(key, (a = new RequestAggregate(options)));
    return a;
  };
  const out: RequestAggregate[] = [];
  for (const e of events)
    for (const size of sizes) {
      const w = Math.floor(e.ts / size);
      out.push(get(`${size}|${w}|${e.service}`, service), get(`${size}|${w}|${e.service}|${e.route}`, route));
    }
  return out;
}

function update(
  events: readonly TelemetryEvent[],
  targets: readonly RequestAggregate[],
  per: number,
  accuracy: number,
): void {
  const input = new RequestInput(accuracy);
  let j = 0;
  for (const e of events) {
    input.set(e.latency_ms, isError(e.status), HyperLogLog.hash(e.user));
    for (let k = 0; k < per; k++) (targets[j++] as RequestAggregate).addInput(input);
  }
}

function encode(records: ReadonlyArray<Pane | LateRecord>, per: number): void {
  const w = new PaneRecords(64 * 1024);
  for (let i = 0; i < records.length; i++) {
    w.add(records[i] as object);
    if (i % per === per - 1) w.take();
  }
  w.take();
}

function cpuOf(run: () => void): number {
  const t0 = process.cpuUsage();
  run();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / 1000;
}
