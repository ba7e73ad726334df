import { describe, expect, it } from "vitest";
import {
  ALL_SERVICES,
  decodePartialBatch,
  encodePartialBatch,
  mergePartitionOf,
  splitByMergePartition,
  type PartialBatch,
} from "../protocol.js";

const SERVICES = Array.from({ length: 400 }, (_, i) => `svc-${i}`);

function batch(services: string[]): PartialBatch {
  return {
    worker: "engine-0-3",
    partitions: [0, 1, 2, 3],
    tickMs: 100,
    from: 1_000,
    to: 1_100,
    clocks: [{ partition: 2, maxTs: 990, lastEventAt: 1_050, events: 3 }],
    deltas: services.map((service, i) => ({ sliceMs: 10_000, sliceStart: 0, service, aggregate: new Uint8Array([i]) })),
  };
}

describe("merge partitions (docs/decisions/0033-merge-partitions.md)", () => {
  it("keeps * on partition 0 and spreads services evenly, short names too", () => {
    for (const m of [1, 2, 3, 8]) expect(mergePartitionOf(ALL_SERVICES, m)).toBe(0);
    for (const m of [2, 3, 8]) {
      const counts = new Array<number>(m).fill(0);
      for (const s of SERVICES) counts[mergePartitionOf(s, m)] = (counts[mergePartitionOf(s, m)] ?? 0) + 1;
      const even = SERVICES.length / m;
      for (const c of counts) expect(Math.abs(c - even)).toBeLessThan(even * 0.25);
    }
    // Eight short names over two partitions: FNV-1a alone put six on one side.
    const short = ["api", "web", "auth", "billing", "search", "cart", "media", "mail"];
    const ones = short.filter((s) => mergePartitionOf(s, 2) === 1).length;
    expect(ones).toBeGreaterThanOrEqual(3);
    expect(ones).toBeLessThanOrEqual(5);
  });

  it("cuts a batch so that each delta is in its key's partition exactly once, and every cut has the whole progress", () => {
    const b = batch([ALL_SERVICES, ...SERVICES.slice(0, 40)]);
    const cut = splitByMergePartition(b, 3);
    expect(cut).toHaveLength(3);
    cut.forEach((c, m) => {
      expect({ ...c, deltas: [] }).toEqual({ ...b, deltas: [], mergePartitions: 3 });
      // The count travels in the body, for the merge operator to check.
      expect(decodePartialBatch(encodePartialBatch(c)).mergePartitions).toBe(3);
      for (const d of c.deltas) expect(mergePartitionOf(d.service, 3)).toBe(m);
    });
    expect(
      cut.flatMap((c) => c.deltas).sort((x, y) => (x.aggregate[0] as number) - (y.aggregate[0] as number)),
    ).toEqual(b.deltas);
    expect(cut[0]?.deltas[0]?.service).toBe(ALL_SERVICES);
    expect(splitByMergePartition(b, 1)).toEqual([b]);
    expect(decodePartialBatch(encodePartialBatch(b)).mergePartitions).toBeUndefined();
  });
});
