/**
 * Encoding a checkpoint's cut, the same for every operator (docs/decisions/0016-checkpoints-without-pause.md):
 * the snapshot is encoded across event-loop turns while the operator's input is held, and the
 * input is released once the state is captured — when the snapshot says its rest is encoded from
 * copies (session rows), else at the end, or at once on a failure.
 */
import type { SnapshotSteps } from "../../core/types.js";
import type { Checkpoint, CheckpointHeader } from "./checkpoint-codec.js";
import type { SnapshotTiming } from "./checkpoint-frame.js";
import { encodeAcrossTurns } from "./snapshot-turns.js";

/** A cut: its header taken, its snapshot still to encode (input held meanwhile). */
export interface Cut {
  header: CheckpointHeader;
  steps: SnapshotSteps;
  /** performance.now() at the cut. */
  t0: number;
}

/** A cut with its snapshot encoded, and how long that held the input. */
export interface Taken extends SnapshotTiming {
  cp: Checkpoint;
}

/** Encodes `cut`; `captured` is called once, when the input may flow again. */
export async function encodeCut(cut: Cut, captured: () => void): Promise<Taken> {
  let pauseMs: number | null = null;
  let holdWorkMs: number | null = null;
  const release = (workMs: number): void => {
    if (pauseMs !== null) return;
    pauseMs = performance.now() - cut.t0;
    holdWorkMs = workMs;
    captured();
  };
  try {
    const s = await encodeAcrossTurns(cut.steps, undefined, release);
    release(s.workMs);
    const cp = { header: cut.header, snapshot: s.bytes };
    const hold = { pauseMs: pauseMs ?? 0, holdWorkMs: holdWorkMs ?? s.workMs };
    return { cp, t0: cut.t0, ...hold, longestSliceMs: s.longestSliceMs, workMs: s.workMs };
  } finally {
    release(0);
  }
}
