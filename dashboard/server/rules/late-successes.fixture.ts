/**
 * Test support (docs/operations.md, "Alerts", "Early panes on the nowcast"): two services, 200
 * requests per 10 s window each, errors arriving 50 ms after they happen and successes 6 s after,
 * so every early pane reads high. `slow` settles at 15 % in every window; `real` too, except a few
 * incident windows after warm-up that settle at 25 %. Run through the real engine core with the
 * default policies; `settled` is the brute-force oracle over the raw events.
 */
import { createCore, validateCoreConfig } from "@tidemark/engine/core";
import type { Pane, TelemetryEvent } from "@tidemark/engine/protocol";

export const W = 10_000;
const PER_WINDOW = 200;
const WINDOWS = 70;
export const T0 = 1_767_225_600_000;
export const config = validateCoreConfig({ partitions: 1 });
/** Past the reference horizon plus a few windows: the bias of every kind and age is measured. */
export const WARM = T0 + config.referenceHorizonMs + 6 * W;
/** Window starts of `real` settling at 25 %: after warm-up, far enough apart to resolve between. */
export const INCIDENTS = new Set([40, 48, 56, 64].map((n) => T0 + n * W));

export function stream(): TelemetryEvent[] {
  const out: TelemetryEvent[] = [];
  for (const service of ["slow", "real"])
    for (let i = 0; i < WINDOWS * PER_WINDOW; i++) {
      const ts = T0 + i * (W / PER_WINDOW);
      const failing = service === "real" && INCIDENTS.has(Math.floor(ts / W) * W) ? 5 : 3;
      const error = i % 20 < failing;
      out.push({
        ts,
        ingest_ts: ts + (error ? 50 : 6_000),
        service,
        route: "/pay",
        status: error ? 503 : 200,
        latency_ms: 40,
        user: `u${i % 50}`,
      });
    }
  return out.sort((a, b) => a.ingest_ts - b.ingest_ts || a.ts - b.ts);
}

/** Brute force: each service's settled error ratio per window start, over every raw event. */
export function settled(events: readonly TelemetryEvent[]): Map<string, number> {
  const n = new Map<string, [number, number]>();
  for (const e of events) {
    const k = `${e.service} ${Math.floor(e.ts / W) * W}`;
    const c = n.get(k) ?? [0, 0];
    c[0]++;
    if (e.status >= 500) c[1]++;
    n.set(k, c);
  }
  return new Map([...n].map(([k, [count, errors]]) => [k, errors / count]));
}

/** Feeds the events through the engine core, each pane to `pane` as it is emitted. */
export function runCore(events: readonly TelemetryEvent[], pane: (p: Pane) => void): void {
  const core = createCore(config);
  const out = { pane, late: () => undefined };
  for (const e of events) core.event(0, e, out);
  core.finish(out);
}
