/**
 * `node dist/bench/thresholds.js` (in `npm run bench -w engine`): what exact counts above latency
 * thresholds cost (docs/decisions/0044-exact-latency-thresholds.md). The default config without
 * thresholds is the baseline, measured in the same run, interleaved with 3 and 8 thresholds (best of
 * N each); then the heap per open (window, key) of each. Prints ratios to the baseline.
 */
import { createCore, defaultCoreConfig, simulate, validateCoreConfig, type CoreConfig } from "../core/index.js";
import type { EventTimeCore } from "../core/stream-core.js";
import { partitionOf, type TelemetryEvent } from "../protocol.js";
import { gc, memoryInUse } from "./heap.js";
import { openWindowKeys } from "./window-keys.js";

const EVENTS = Number(process.env.TM_BENCH_EVENTS ?? 250_000);
const REPEATS = 5;

const configs: [string, CoreConfig][] = [
  ["no thresholds (baseline)", defaultCoreConfig()],
  ["3 thresholds", validateCoreConfig({ ...defaultCoreConfig(), latencyThresholdsMs: [100, 300, 1000] })],
  [
    "8 thresholds",
    validateCoreConfig({ ...defaultCoreConfig(), latencyThresholdsMs: [10, 25, 50, 100, 250, 500, 1000, 2500] }),
  ],
];

function nsPerEvent(events: readonly TelemetryEvent[], parts: readonly number[], config: CoreConfig): number {
  gc();
  const core = createCore(config);
  const out = { pane: () => {}, late: () => {} };
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < events.length; i++) core.event(parts[i] as number, events[i] as TelemetryEvent, out);
  core.finish(out);
  return Number(process.hrtime.bigint() - t0) / events.length;
}

function heapPerKey(events: readonly TelemetryEvent[], config: CoreConfig): number {
  gc();
  gc();
  const before = memoryInUse();
  const core = createCore(config) as EventTimeCore;
  const out = { pane: () => {}, late: () => {} };
  for (const e of events) core.event(partitionOf(e.service, config.partitions), e, out);
  gc();
  gc();
  return (memoryInUse() - before) / openWindowKeys(core);
}

const events = simulate({ seed: 1, events: EVENTS, spanMs: 5_000, services: 20, routes: 20, users: 20_000 });
const parts = events.map((e) => partitionOf(e.service, 8));
const best = configs.map(() => Infinity);
for (let r = 0; r < REPEATS; r++)
  configs.forEach(([, c], i) => (best[i] = Math.min(best[i] as number, nsPerEvent(events, parts, c))));
const heap = configs.map(([, c]) => heapPerKey(events.slice(0, 200_000), c));
console.log(
  `latency thresholds: ${EVENTS} events over 5 s, 20 services × 20 routes, default policies; best of ${REPEATS}`,
);
configs.forEach(([name], i) => {
  const ns = best[i] as number;
  const h = heap[i] as number;
  console.log(
    `  ${name.padEnd(26)} ${ns.toFixed(0).padStart(6)} ns/event (×${(ns / (best[0] as number)).toFixed(3)})` +
      `  ${h.toFixed(0).padStart(6)} B per open (window, key) (×${(h / (heap[0] as number)).toFixed(3)})`,
  );
});
