/**
 * The two-stage dataflow in the pure core (docs/decisions/0029-two-stage-dataflow.md): stage-1
 * partial accumulators per worker, the tick aligner, and a core fed merged ticks. The all-services
 * panes must not depend on how partitions are spread over workers nor on the order batches arrive,
 * and must be exact where the sketches are (counts, errors) and within their error elsewhere.
 */
import { describe, expect, it } from "vitest";
import {
  ALL_SERVICES,
  decodePartialBatch,
  encodePartialBatch,
  partitionOf,
  type PartialBatch,
  type TelemetryEvent,
} from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { coreAggregates, createCore, partialSliceLengths } from "../create-core.js";
import { PartialAccumulator, type PartialAccumulatorState } from "./partial-accumulator.js";
import { TickAligner, type TickAlignerState } from "./tick-aligner.js";
import type { CoreConfig, CoreStatus, PartialTick, PolicyConfig } from "../types.js";

import { config, expectSamePanes, interleave, P, stageTwo, stream, TICK, T0 } from "../__fixtures__/two-stage.js";

/** Stage 1: one accumulator per worker over its partitions' events, in arrival order; a last heartbeat closes the open tick. */
function stageOne(events: readonly TelemetryEvent[], workers: number[][], cfg: CoreConfig): PartialBatch[][] {
  const kind = coreAggregates(cfg);
  const sliceMs = partialSliceLengths(cfg);
  const end = (events.at(-1) as TelemetryEvent).ingest_ts + 200_000;
  return workers.map((partitions, w) => {
    const out: PartialBatch[] = [];
    // With a percentile policy the worker's own core runs beside, as in the runtime: its delay
    // quantiles go into the batches.
    const core = cfg.policies.some((p) => p.watermark.kind === "percentile")
      ? createCore({ ...cfg, partitions: partitions.length })
      : null;
    const sink = capture();
    const acc = new PartialAccumulator({
      worker: `w${w}`,
      partitions,
      tickMs: TICK,
      sliceMs,
      kind,
      delays: (lane) => core?.delayQuantiles?.(lane),
      emit: (b) => out.push(decodePartialBatch(encodePartialBatch(b))),
    });
    for (const e of events) {
      const lane = partitions.indexOf(partitionOf(e.service, P));
      if (lane >= 0) {
        acc.event(lane, e);
        core?.event(lane, e, sink);
      } else acc.heartbeat(e.ingest_ts);
    }
    acc.heartbeat(end);
    return out;
  });
}

describe("two-stage dataflow (pure)", () => {
  const events = stream(20_000, 7);
  const cfg = config();
  const one = stageTwo(interleave(stageOne(events, [[0, 1, 2, 3, 4, 5, 6, 7]], cfg)), cfg);

  it("gives the same all-services panes with 1, 2 or 3 workers, in any interleaving", () => {
    expect(one.length).toBeGreaterThan(50);
    expect(one.every((p) => p.key.service === ALL_SERVICES && p.key.route === undefined)).toBe(true);
    const splits = [
      [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
      ],
      [
        [0, 2, 4, 6],
        [1, 3, 5, 7],
      ],
      [
        [0, 3, 6],
        [1, 4, 7],
        [2, 5],
      ],
    ];
    for (const split of splits)
      for (const skew of [0, 40]) {
        const panes = stageTwo(interleave(stageOne(events, split, cfg), skew), cfg);
        expectSamePanes(panes, one);
      }
  });

  it("runs a percentile-watermark policy from the partitions' delay quantiles: split-proof, a single worker's drops", () => {
    const pct: PolicyConfig = {
      name: "pct",
      label: "pct: q0.9 of 200",
      watermark: { kind: "percentile", q: 0.9, sample: 200 },
      graceMs: 0,
      earlyEveryMs: null,
      lateEveryMs: null,
      mode: "accumulating",
    };
    const c2: CoreConfig = { ...cfg, policies: [...cfg.policies, pct] };
    const dropsOf = (st: CoreStatus | undefined): number =>
      st?.policies.find((p) => p.name === "pct")?.droppedEvents ?? NaN;
    const merged: { of?: CoreStatus } = {};
    const whole = stageTwo(interleave(stageOne(events, [[0, 1, 2, 3, 4, 5, 6, 7]], c2)), c2, merged);
    expect(whole.filter((p) => p.policy === "pct" && p.value.count > 0).length).toBeGreaterThan(20);
    const split = stageOne(
      events,
      [
        [0, 2, 4, 6],
        [1, 3, 5, 7],
      ],
      c2,
    );
    expectSamePanes(stageTwo(interleave(split, 40), c2), whole);
    // A single worker's core over the same events drops about as many for pct.
    const single = createCore(c2);
    const sink = capture();
    for (const e of events) single.event(partitionOf(e.service, P), e, sink);
    const singleDrops = dropsOf(single.status());
    expect(Math.abs(dropsOf(merged.of) - singleDrops) / events.length).toBeLessThan(0.01);
    // Without the quantiles the merge stage would take W as log time: it would drop far more.
    const bare = split.map((l) => l.map((b) => ({ ...b, clocks: b.clocks.map(({ delays: _d, ...c }) => c) })));
    const blind: { of?: CoreStatus } = {};
    stageTwo(interleave(bare), c2, blind);
    expect(dropsOf(blind.of)).toBeGreaterThan(2 * singleDrops + 100);
  });

  it("ignores a worker's replayed batches", () => {
    const lists = stageOne(
      events,
      [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
      ],
      cfg,
    );
    const first = lists[0] as PartialBatch[];
    const replayed = [...first.slice(0, 30), ...first.slice(10)];
    const panes = stageTwo(interleave([replayed, lists[1] as PartialBatch[]]), cfg);
    expectSamePanes(panes, one);
  });

  it("releases the same ticks after a restore from the aligner's state (through JSON), cut anywhere", () => {
    const order = interleave(
      stageOne(
        events,
        [
          [0, 1, 2, 3],
          [4, 5, 6, 7],
        ],
        cfg,
      ),
      7,
    );
    const kind = coreAggregates(cfg);
    const text = (t: PartialTick): string =>
      JSON.stringify([t.at, t.clocks, t.deltas.map((d) => [d.sliceMs, d.sliceStart, d.service, [...d.agg.encode()]])]);
    const run = (cut: number | null): string[] => {
      const out: string[] = [];
      let a = new TickAligner(P, kind, cfg.idleTimeoutMs);
      order.forEach((b, now) => {
        if (now === cut) {
          const state = JSON.parse(JSON.stringify(a.state())) as TickAlignerState;
          a = new TickAligner(P, kind, cfg.idleTimeoutMs);
          a.restore(state, now);
        }
        a.offer(b, now);
        const r = a.release(now);
        out.push(...r.ticks.map(text), String(r.logTime));
      });
      return out;
    };
    const whole = run(null);
    expect(whole.length).toBeGreaterThan(order.length);
    for (const cut of [1, 8, order.length >> 1, order.length - 1]) expect(run(cut)).toEqual(whole);
  });

  it("emits the same batches after a restore from the accumulator's state, cut anywhere", () => {
    const partitions = [0, 1, 2, 3];
    const kind = coreAggregates(cfg);
    const sliceMs = partialSliceLengths(cfg);
    const run = (cut: number | null): string[] => {
      const out: string[] = [];
      const opts = {
        worker: "w",
        partitions,
        tickMs: TICK,
        sliceMs,
        kind,
        emit: (b: PartialBatch) => void out.push(JSON.stringify(decodePartialBatch(encodePartialBatch(b)))),
      };
      let acc = new PartialAccumulator(opts);
      events.slice(0, 3_000).forEach((e, i) => {
        if (i === cut)
          acc = new PartialAccumulator(opts, JSON.parse(JSON.stringify(acc.state())) as PartialAccumulatorState);
        const lane = partitions.indexOf(partitionOf(e.service, P));
        if (lane >= 0) acc.event(lane, e);
        else acc.heartbeat(e.ingest_ts);
      });
      return out;
    };
    const whole = run(null);
    expect(whole.length).toBeGreaterThan(100);
    for (const cut of [1, 777, 1_501, 2_999]) expect(run(cut)).toEqual(whole);
  });

  it("counts exactly what the events hold, and users within the HyperLogLog's error where the sum over services over-counts", () => {
    const finals = one.filter(
      (p) => p.policy === "billing" && p.kind === "final" && p.window.end - p.window.start === 10_000,
    );
    expect(finals.length).toBeGreaterThan(10);
    for (const p of finals) {
      const inWindow = events.filter((e) => e.ts >= p.window.start && e.ts < p.window.end);
      if (inWindow.length < 200) continue;
      expect(p.value.count).toBe(inWindow.length);
      expect(p.value.errors).toBe(inWindow.filter((e) => e.status >= 500).length);
      const exactUsers = new Set(inWindow.map((e) => e.user)).size;
      expect(Math.abs(p.value.users - exactUsers)).toBeLessThanOrEqual(Math.max(2, 0.03 * exactUsers));
      const perService = new Map<string, Set<string>>();
      for (const e of inWindow)
        (perService.get(e.service) ?? perService.set(e.service, new Set()).get(e.service))?.add(e.user);
      const summed = [...perService.values()].reduce((s, u) => s + u.size, 0);
      expect(summed).toBeGreaterThan(exactUsers * 1.3);
    }
  });

  it("takes p99 from the merged sketch: within its relative accuracy of the exact p99", () => {
    const finals = one.filter(
      (p) => p.policy === "billing" && p.kind === "final" && p.window.end - p.window.start === 60_000,
    );
    expect(finals.length).toBeGreaterThan(1);
    for (const p of finals) {
      const l = events.filter((e) => e.ts >= p.window.start && e.ts < p.window.end).map((e) => e.latency_ms);
      l.sort((a, b) => a - b);
      const exact = l[Math.floor(0.99 * (l.length - 1))] as number;
      expect(Math.abs(p.value.p99 - exact) / exact).toBeLessThan(0.03);
    }
  });
});

describe("tick aligner", () => {
  const cfg = config();
  const kind = coreAggregates(cfg);
  const batch = (worker: string, partitions: number[], from: number, to: number): PartialBatch => ({
    worker,
    partitions,
    tickMs: TICK,
    from,
    to,
    clocks: [],
    deltas: [],
  });

  it("is held back by the slowest worker, names it, and leaves it out once unheard of for the idle timeout", () => {
    const a = new TickAligner(P, kind, 10_000);
    expect(a.offer(batch("fast", [0, 1, 2, 3], T0, T0 + 5_000), 0)).toBe("accepted");
    expect(a.offer(batch("slow", [4, 5, 6, 7], T0, T0 + 1_000), 0)).toBe("accepted");
    expect(a.release(0).logTime).toBe(T0 + 1_000);
    expect(a.heldBackBy()).toEqual({ partition: 4, worker: "slow", reportedTo: T0 + 1_000 });
    expect(a.release(9_999).logTime).toBeNull();
    expect(a.release(10_000).logTime).toBe(T0 + 5_000);
    expect(a.offer(batch("slow", [4, 5, 6, 7], T0 + 500, T0 + 1_000), 10_001)).toBe("duplicate");
    expect(a.offer(batch("slow", [4, 5, 6, 7], T0 + 500, T0 + 2_000), 10_001)).toBe("overlap");
  });

  it("refuses a body that does not decode, naming the field", () => {
    const body = encodePartialBatch(batch("w", [0], T0, T0 + TICK));
    expect(() => decodePartialBatch(body.subarray(0, 6))).toThrow(/header|magic/);
    const bad = encodePartialBatch({ ...batch("w", [0], T0 + 1, T0 + TICK) });
    expect(() => decodePartialBatch(bad)).toThrow(/from .* is not on the 100 ms tick grid/);
    const backwards = encodePartialBatch(batch("w", [0], T0, T0));
    expect(() => decodePartialBatch(backwards)).toThrow(/to .* is not after from/);
  });
});
