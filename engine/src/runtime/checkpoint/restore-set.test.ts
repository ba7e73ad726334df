import { describe, expect, it } from "vitest";
import type { CheckpointHeader } from "./checkpoint-codec.js";
import { chooseRestoreSet, type FoundCheckpoint, type RestoreWant } from "./restore-set.js";
import { RuntimeError } from "../errors.js";

const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/** A worker checkpoint of `partitions`, each resuming after `seq`. */
function file(
  operator: string,
  partitions: number[],
  seq: number,
  extra: Partial<CheckpointHeader> = {},
): FoundCheckpoint {
  const header: CheckpointHeader = {
    worker: operator,
    partitionCount: 8,
    partitions,
    offsets: partitions.map(() => ({ lastSeq: seq, partialSeq: 0, partialCount: 0, logTime: seq * 10 })),
    logTime: seq * 10,
    wallTime: seq,
    ...extra,
  };
  return { operator, file: `/d/${operator}/checkpoint-${String(seq).padStart(12, "0")}.tmck`, header };
}

const want = (operator: string, partitions: number[], more: Partial<RestoreWant> = {}): RestoreWant => ({
  operator,
  partitions,
  partitionCount: 8,
  epoch: 0,
  ...more,
});

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    return err instanceof RuntimeError ? `${err.code}: ${err.message}` : String(err);
  }
  return "no error";
}

describe("chooseRestoreSet", () => {
  it("starts fresh when no checkpoint holds any of its partitions", () => {
    expect(chooseRestoreSet([file("w-a", range(4, 7), 9)], want("w-b", range(0, 3)))).toEqual({ kind: "fresh" });
  });

  it("leaves the same layout to the operator's own store", () => {
    const found = [file("engine-0-7", range(0, 7), 5, { barrier: 2 }), file("engine-0-7", range(0, 7), 9)];
    expect(chooseRestoreSet(found, want("engine-0-7", range(0, 7)))).toEqual({ kind: "same" });
  });

  it("splits a clean stop's final checkpoint between two workers, each taking its partitions", () => {
    const fin = file("engine-0-7", range(0, 7), 9, { final: true });
    const found = [file("engine-0-7", range(0, 7), 5, { barrier: 2 }), fin];
    const low = chooseRestoreSet(found, want("engine-0-3", range(0, 3)));
    expect(low).toEqual({
      kind: "cut",
      cut: "the final checkpoints of a clean stop",
      files: [{ found: fin, partitions: range(0, 3) }],
      fresh: [],
    });
    const high = chooseRestoreSet(found, want("engine-4-7", range(4, 7)));
    expect(high.kind === "cut" && high.files).toEqual([{ found: fin, partitions: range(4, 7) }]);
  });

  it("joins final checkpoints of several workers, each partition from its newest", () => {
    const old = file("engine-0-7", range(0, 7), 4, { final: true });
    const a = file("engine-0-3", range(0, 3), 9, { final: true });
    const set = chooseRestoreSet([old, a], want("engine-0-7", range(0, 7)));
    expect(set).toEqual({
      kind: "cut",
      cut: "the final checkpoints of a clean stop",
      files: [
        { found: a, partitions: range(0, 3) },
        { found: old, partitions: range(4, 7) },
      ],
      fresh: [],
    });
  });

  it("refuses an aligned cut of another layout unless the restore may take one (a savepoint's)", () => {
    const a = file("engine-0-3", range(0, 3), 7, { barrier: 6 });
    const b = file("engine-4-7", range(4, 7), 8, { barrier: 6 });
    const newer = file("engine-0-3", range(0, 3), 9, { barrier: 7 });
    const found = [a, b, newer];
    expect(codeOf(() => chooseRestoreSet(found, want("engine-0-7", range(0, 7))))).toMatch(
      /^TM_CHECKPOINT_ROLLBACK: .*aligned checkpoint 6.*--from-savepoint/,
    );
    const set = chooseRestoreSet(found, want("engine-0-7", range(0, 7), { aligned: true }));
    expect(set).toEqual({
      kind: "cut",
      cut: "aligned checkpoint 6",
      files: [
        { found: a, partitions: range(0, 3) },
        { found: b, partitions: range(4, 7) },
      ],
      fresh: [],
    });
  });

  it("prefers the completed aligned checkpoint the coordinator names", () => {
    const found = [file("w-a", range(0, 7), 7, { barrier: 6 }), file("w-a", range(0, 7), 9, { barrier: 7 })];
    const set = chooseRestoreSet(found, want("w-b", range(0, 3), { aligned: true, completed: 6 }));
    expect(set.kind === "cut" && set.cut).toBe("aligned checkpoint 6");
  });

  it("refuses partitions no cut covers, naming them and what to do", () => {
    // Partitions 4-7 were stopped cleanly, 0-3 were killed after an aligned checkpoint that 4-7 never took.
    const found = [file("w-low", range(0, 3), 7, { barrier: 6 }), file("w-high", range(4, 7), 9, { final: true })];
    const msg = codeOf(() => chooseRestoreSet(found, want("engine-0-7", range(0, 7), { aligned: true })));
    expect(msg).toMatch(/^TM_CHECKPOINT_UNCOVERED: no consistent cut covers partitions \[0-7\]/);
    expect(msg).toContain("aligned checkpoint 6 lacks partitions [4-7]");
    expect(msg).toContain("partitions [0-3] were not stopped cleanly");
    expect(msg).toContain("SIGTERM");
  });

  it("starts partitions no checkpoint holds fresh beside the restored ones", () => {
    const fin = file("engine-0-3", range(0, 3), 9, { final: true });
    const set = chooseRestoreSet([fin], want("engine-0-7", range(0, 7)));
    expect(set).toEqual({
      kind: "cut",
      cut: "the final checkpoints of a clean stop",
      files: [{ found: fin, partitions: range(0, 3) }],
      fresh: range(4, 7),
    });
  });

  it("refuses state written with another partition count", () => {
    const found = [file("engine-0-7", range(0, 7), 9, { final: true, partitionCount: 16 })];
    expect(codeOf(() => chooseRestoreSet(found, want("engine-0-7", range(0, 7))))).toMatch(
      /^TM_PARTITION_COUNT_CHANGED: .*partitionCount 16, but this engine runs with 8.*maximum parallelism/,
    );
  });

  it("reads only the restore epoch it is in", () => {
    const old = file("engine-0-7", range(0, 7), 9, { final: true });
    expect(chooseRestoreSet([old], want("engine-0-3", range(0, 3), { epoch: 1 }))).toEqual({ kind: "fresh" });
  });
});
