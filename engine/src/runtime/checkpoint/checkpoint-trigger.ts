/**
 * When an operator checkpoints (docs/operations.md, "Checkpoints"; docs/decisions/0045-operator-host.md,
 * decision 5): the OperatorHost runs the cut's sequence — hold the input, capture the operator's
 * state, release the input, encode across turns, persist once the output before the cut is
 * acknowledged, report — and asks the operator's trigger, between two batches with none being
 * written, whether a cut is due. A cut the operator asks for itself (a merge operator's alignment
 * complete) is a CutPlan handed to the host at once. Triggers: WorkerTrigger (worker-trigger.ts),
 * MergeTrigger (merge-trigger.ts).
 */
import type { Taken } from "./encode-cut.js";

/** One cut: what it is, and what happens around it. */
export interface CutPlan {
  /** The aligned checkpoint n it is (absent: one of the operator's own, or the final one). */
  barrier?: number;
  /** The final checkpoint of a stop. */
  final?: boolean;
  /** Right after the state is taken, before it is encoded (a worker sends barrier n after its partials). */
  afterCut?(): void;
  /** The state is captured and the input flows again (a merge operator handles what its alignment held). */
  captured?(): void;
  /** The checkpoint is durable: its file, its encoding and the wall clock at its cut. */
  durable?(file: string, taken: Taken, wallTime: number): void;
  /** The log line if it fails (default: "checkpoint failed; the next one will retry"). */
  failure?: string;
}

/** An operator's own checkpoints: due by log time and spacing, or asked for. */
export interface CheckpointTrigger {
  /** Between two batches, none being written: the cut due at log time `logTime`, else null. */
  due(logTime: number): CutPlan | null;
  /** The operator resumes from a cut at this log time (the host says so before any input). */
  restored(logTime: number | null): void;
  /** A cut was taken (any: due, aligned or final) at this log time and wall clock. */
  cut(logTime: number | null, wallTime: number): void;
  /** Its snapshot was encoded (what the spacing of the next one weighs). */
  encoded(taken: Taken): void;
}
