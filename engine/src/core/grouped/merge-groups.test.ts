/**
 * A merge core made of old merge partitions' cores (merge-groups.ts): two merge operators' cores
 * (merge partitions 0 and 1 of 2) run to a cut on their own keys' aggregates, then gathered into
 * one core fed whole ticks, emit together exactly the panes the two would have emitted going on
 * apart (docs/decisions/0057-elastic-workers.md).
 */
import { describe, expect, it } from "vitest";
import { mergePartitionOf, partitionOf, type Pane, type TelemetryEvent } from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { config, P, stream, TICK } from "../__fixtures__/two-stage.js";
import { coreAggregates, createCore, partialSliceLengths, restoreCore } from "../create-core.js";
import { PartialAccumulator } from "../partials/partial-accumulator.js";
import { TickAligner } from "../partials/tick-aligner.js";
import type { PartialTick, StreamCore } from "../types.js";
import { MergeGroups } from "./merge-groups.js";
import { decodeGroupContainer } from "./group-container.js";

const cfg = config();
const events = stream(8000, 5);

/** The merged ticks of one worker over every partition, with per-service aggregates (partitioned by route). */
function ticks(): PartialTick[] {
  const kind = coreAggregates(cfg);
  const aligner = new TickAligner(P, kind, cfg.idleTimeoutMs);
  const out: PartialTick[] = [];
  const all = Array.from({ length: P }, (_, p) => p);
  const acc = new PartialAccumulator({
    worker: "w",
    partitions: all,
    tickMs: TICK,
    sliceMs: partialSliceLengths(cfg),
    kind,
    serviceKeys: true,
    emit: (b) => {
      aligner.offer(b, 0);
      out.push(...aligner.release(0).ticks);
    },
  });
  for (const e of events) acc.event(partitionOf(e.service, P), e as TelemetryEvent);
  acc.heartbeat((events.at(-1) as TelemetryEvent).ingest_ts + 300_000);
  return out;
}

/** A tick with only the aggregates of merge partition m of 2. */
const only = (t: PartialTick, m: number): PartialTick => ({
  ...t,
  deltas: t.deltas.filter((d) => mergePartitionOf(d.service, 2) === m),
});

const feed = (core: StreamCore, ts: readonly PartialTick[], out: ReturnType<typeof capture>, m?: number): void => {
  for (const t of ts) {
    core.partial?.(m === undefined ? t : only(t, m), out);
    for (let p = 0; p < P; p++) core.heartbeat(p, t.at, out);
  }
};

const key = (p: Pane): string => `${p.id}#${p.seq}|${p.kind}|${JSON.stringify(p.value)}`;

describe("MergeGroups", () => {
  it("two merge partitions' cores gathered into one emit what the two would have", () => {
    const all = ticks();
    expect(all.some((t) => t.deltas.some((d) => mergePartitionOf(d.service, 2) === 1))).toBe(true);
    const cut = Math.floor(all.length / 2);
    const before = capture();
    const a = createCore(cfg);
    const b = createCore(cfg);
    feed(a, all.slice(0, cut), before, 0);
    feed(b, all.slice(0, cut), before, 1);
    const [sa, sb] = [a.snapshot(), b.snapshot()];

    const apart = capture();
    feed(restoreCore(cfg, sa), all.slice(cut), apart, 0);
    feed(restoreCore(cfg, sb), all.slice(cut), apart, 1);
    const gathered = capture();
    const groups = new MergeGroups([
      { partition: 0, of: 2, core: restoreCore(cfg, sa) },
      { partition: 1, of: 2, core: restoreCore(cfg, sb) },
    ]);
    feed(groups, all.slice(cut), gathered);

    expect(apart.panes.length).toBeGreaterThan(100);
    expect(gathered.panes.map(key).sort()).toEqual(apart.panes.map(key).sort());
    // Its snapshot holds each group's, in order.
    expect(decodeGroupContainer(groups.snapshot())).toHaveLength(2);
  });
});
