import { describe, expect, it } from "vitest";
import {
  decodePartialBatch,
  decodePartialMessage,
  encodePartialBatch,
  encodePartialRun,
  MAX_RUN_BATCHES,
  PartialBatchError,
  type PartialBatch,
} from "../protocol.js";

function batch(from: number, events: number): PartialBatch {
  return {
    worker: "engine-0-3",
    partitions: [0, 1, 2, 3],
    tickMs: 100,
    from,
    to: from + 100,
    clocks: [{ partition: 1, maxTs: from - 7, lastEventAt: from + 42, events }],
    deltas: [
      { sliceMs: 10_000, sliceStart: 0, service: "*", aggregate: new Uint8Array([events, 1, 2]) },
      { sliceMs: 60_000, sliceStart: 0, service: "*", aggregate: new Uint8Array(events) },
    ],
  };
}

function refusal(body: Uint8Array): string {
  try {
    decodePartialMessage(body);
  } catch (err) {
    expect(err).toBeInstanceOf(PartialBatchError);
    return (err as PartialBatchError).field;
  }
  throw new Error("decoded");
}

describe("a run of partial batches in one message (docs/decisions/0054-partial-runs.md)", () => {
  it("gives back each batch as it decodes alone, in order; a single batch's body is a run of one", () => {
    const batches = [batch(1_000, 3), batch(1_100, 0), batch(1_300, 9)];
    const bodies = batches.map(encodePartialBatch);
    const got = decodePartialMessage(encodePartialRun(bodies));
    expect(got).toEqual(bodies.map(decodePartialBatch));
    expect(got.map((b) => [b.from, b.clocks[0]?.events])).toEqual([
      [1_000, 3],
      [1_100, 0],
      [1_300, 9],
    ]);
    expect(decodePartialMessage(bodies[0] as Uint8Array)).toEqual([decodePartialBatch(bodies[0] as Uint8Array)]);
  });

  it("refuses a run whole, naming the field, when any part of it is wrong", () => {
    const bodies = [batch(1_000, 3), batch(1_100, 4)].map(encodePartialBatch);
    const run = encodePartialRun(bodies);
    const version = run.slice();
    version[4] = 9;
    expect(refusal(version)).toBe("run.version");
    expect(refusal(run.subarray(0, 7))).toBe("run");
    expect(refusal(run.subarray(0, run.length - 1))).toBe("run[1].length");
    const extra = new Uint8Array(run.length + 2);
    extra.set(run);
    expect(refusal(extra)).toBe("run");
    const bad = run.slice();
    bad[9 + 4] = 0x58; // the first batch's magic
    expect(refusal(bad)).toBe("run[0].magic");
    expect(refusal(encodePartialRun([]))).toBe("run.count");
    const tooMany = encodePartialRun(Array.from({ length: MAX_RUN_BATCHES + 1 }, () => bodies[0] as Uint8Array));
    expect(refusal(tooMany)).toBe("run.count");
  });
});
