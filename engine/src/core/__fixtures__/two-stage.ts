/**
 * Test support for the two-stage dataflow in the pure core (docs/decisions/0029-two-stage-dataflow.md):
 * a stream of events, stage 2 (the tick aligner and a core fed merged ticks), batch interleavings
 * and a byte-for-byte pane comparison.
 */
import { expect } from "vitest";
import { partitionOf, type PartialBatch, type Pane, type TelemetryEvent } from "../../protocol.js";
import { capture } from "./capture.js";
import { coreAggregates, createCore } from "../create-core.js";
import { defaultCoreConfig } from "../default-config.js";
import { Prng } from "../prng.js";
import { TickAligner } from "../partials/tick-aligner.js";
import type { CoreConfig, CoreStatus } from "../types.js";

export const P = 8;
export const TICK = 100;
export const T0 = 1_700_000_000_000;

/** Users visit several services (a shared pool), errors and latencies vary by service; delays up to 30 s. */
export function stream(n: number, seed: number): TelemetryEvent[] {
  const rng = new Prng(seed);
  const services = ["api", "auth", "cart", "checkout", "search", "web"];
  let t = T0;
  const out: TelemetryEvent[] = [];
  for (let i = 0; i < n; i++) {
    t += rng.int(20);
    const s = rng.int(services.length);
    const delay = rng.next() < 0.1 ? rng.int(30_000) : rng.int(1_500);
    out.push({
      ts: t - delay,
      ingest_ts: t,
      service: services[s] as string,
      route: `/r${rng.int(3)}`,
      status: rng.next() < 0.02 * (s + 1) ? 503 : 200,
      latency_ms: rng.exponential(20 + 10 * s),
      user: `u${rng.int(400)}`,
    });
  }
  return out;
}

export function config(): CoreConfig {
  return { ...defaultCoreConfig(), partitions: P };
}

/** Stage 2: batches offered in the given interleaving, merged ticks fed to a core, then finish(). */
export function stageTwo(order: PartialBatch[], cfg: CoreConfig, status?: { of?: CoreStatus }): Pane[] {
  const core = createCore(cfg);
  const aligner = new TickAligner(P, coreAggregates(cfg), cfg.idleTimeoutMs);
  const out = capture();
  // The caller's clock: one ms per batch, so no worker is ever silent for the idle timeout here.
  order.forEach((b, now) => {
    expect(aligner.offer(b, now)).not.toBe("overlap");
    const { ticks, logTime } = aligner.release(now);
    for (const t of ticks) core.partial?.(t, out);
    if (logTime !== null) for (let p = 0; p < P; p++) core.heartbeat(p, logTime, out);
  });
  core.finish(out);
  if (status) status.of = core.status();
  return out.panes;
}

/** Round-robin over the workers' batch lists, skipping `skew` batches of the first worker ahead. */
export function interleave(lists: PartialBatch[][], skew = 0): PartialBatch[] {
  const out: PartialBatch[] = [...(lists[0] ?? []).slice(0, skew)];
  const pos = lists.map((_, i) => (i === 0 ? skew : 0));
  for (let more = true; more;) {
    more = false;
    lists.forEach((l, i) => {
      const b = l[pos[i] as number];
      if (b === undefined) return;
      out.push(b);
      pos[i] = (pos[i] as number) + 1;
      more = true;
    });
  }
  return out;
}

/** Byte for byte; a mismatch names the first differing pane rather than print every pane. */
export function expectSamePanes(got: readonly Pane[], want: readonly Pane[]): void {
  const i = got.findIndex((p, k) => JSON.stringify(p) !== JSON.stringify(want[k]));
  if (i >= 0) {
    const g = got[i] as Pane;
    const w = want[i] as Pane;
    expect({
      index: i,
      id: g.id,
      seq: g.seq,
      kind: g.kind,
      at: g.emittedAt,
      count: g.value.count,
      dropped: g.dropped,
      wm: g.watermark,
    }).toEqual({
      index: i,
      id: w.id,
      seq: w.seq,
      kind: w.kind,
      at: w.emittedAt,
      count: w.value.count,
      dropped: w.dropped,
      wm: w.watermark,
    });
  }
  expect(got.length).toBe(want.length);
}
