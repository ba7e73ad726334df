/**
 * The contract between the OperatorHost and the operator it runs (docs/architecture.md, "The
 * engine's folders"; docs/decisions/0045-operator-host.md). As in Arroyo, the host does what every
 * operator needs — the input loop over the operator's InputSource, the cut of a checkpoint and its
 * sequence, output, its backpressure gate, pane counts, pipeline lag, the stop with its final
 * checkpoint, the connection — and the operator implements only its own handlers: process a batch,
 * its log time and wall-clock progress, its trigger, the checkpointed state it owns (one explicit
 * type per operator: checkpoint/worker-state.ts, checkpoint/merge-state.ts) and its restore. As
 * Arroyo's operators, it is built bare and the host hands it its restored state (`restore`) before
 * its input starts: what `handleCheckpoint` produced at the cut it resumes from, unchanged.
 */
import type { BodyBuffers } from "../output/body-buffers.js";
import type { GroupMessage } from "../output/emit-group.js";
import type { GatedOutput } from "../output/output-gate.js";
import type { PublishStats } from "../output/pane-sink.js";
import type { HoldCause } from "../output/input-hold.js";
import type { PipelineLag } from "../status/pipeline-lag.js";
import type { OperatorLog } from "../operator-log.js";
import type { SnapshotSteps } from "../../core/types.js";
import type { Restored, StateFrame } from "../checkpoint/state-frames.js";
import type { CheckpointTrigger, CutPlan } from "../checkpoint/checkpoint-trigger.js";
import type { InputSource } from "./input-source.js";
import type { PaneCounts } from "./pane-counts.js";

/** The aligned checkpoint cut and not yet durable, with how long it has waited. */
export interface CheckpointWaiting {
  n: number;
  waitedMs: number;
}

/** An output of the operator's own beside the host's pane sink (the stage-1 partials). */
export interface OperatorOutput {
  cause: HoldCause;
  out: (GatedOutput & { flush(): Promise<void>; close(): void; stats(): PublishStats }) | null;
}

/** What the host gives its operator: where output goes, and what it counts. */
export interface HostContext {
  /** Sends one sealed EmitGroup message to the pane sink (compressed or not, body-sender.ts). */
  readonly send: (m: GroupMessage) => void;
  /** The reused body buffers the EmitGroups write into. */
  readonly buffers: BodyBuffers;
  /** Panes emitted by policy and kind: the operator counts each pane it hands to a group. */
  readonly panes: PaneCounts;
  /** The restore epoch: the operator publishes its panes through `epochPane` (output/epoch-output.ts); the host's `send` stamps message ids. */
  readonly epoch: number;
  /** Wall clock − log time as records are handled (tidemark_*_pipeline_lag_seconds, tm.status). */
  readonly pipelineLag: PipelineLag;
  readonly log: OperatorLog;
  readonly clock: () => number;
  /** True while the pane sink or one of the operator's own outputs is saturated (its window full). */
  outputSaturated(): boolean;
  /** Resolves once everything published so far (panes and the operator's own outputs) is acknowledged. */
  flushOutput(): Promise<void>;
  /** A cut now, whatever is being written (a merge operator's alignment complete; host-checkpoints.ts). */
  cut(plan: CutPlan): void;
  /** True from a cut until its state is captured: no input is pulled meanwhile. */
  holding(): boolean;
  /** Runs the input loop soon (a checkpoint was asked for: it is cut between two batches). */
  wake(): void;
}

/** An operator's state S at a cut (WorkerState, MergeState) and the core's snapshot. */
export interface OperatorCheckpoint<S = unknown> {
  state: S;
  steps: SnapshotSteps;
}

/** The handlers an operator implements over its input batches B and its checkpointed state S; the host calls them. */
export interface Operator<B = unknown, S = unknown> {
  /** The operator's id (config `worker`, flag --worker): its checkpoints, acks and tm.status carry it. */
  readonly operatorId: string;
  /** Records handled: events read, or the events the merged partials stand for. */
  readonly eventsTotal: number;
  /** Its own outputs beside the pane sink, gated and flushed with it. */
  readonly outputs: readonly OperatorOutput[];
  /** Its input, which the host starts, pulls batches from, releases, restarts and stops. */
  readonly input: InputSource<B>;
  /** When it checkpoints of its own accord; the host asks between two batches. */
  readonly trigger: CheckpointTrigger;
  /** Handles one batch of its input; returns how many items it held. */
  processBatch(batch: B): number;
  /** Its log time: where a cut now stands (null: nothing handled yet, no cut). */
  logTime(): number | null;
  /** How its state S sits in the checkpoint header (checkpoint/state-frames.ts). */
  readonly stateFrame: StateFrame<S>;
  /** Its state at a cut, taken now (the input is held from here until the state is captured). */
  handleCheckpoint(plan: CutPlan): OperatorCheckpoint<S>;
  /**
   * What `handleCheckpoint` produced at the cut it resumes from: the same state, the core made from
   * that snapshot (in place of its fresh one), and that cut's log time. Called by the host once,
   * before any input, progress or cut; not on a fresh start.
   */
  restore(restored: Restored<S>): void;
  /** Wall-clock progress every `progressEveryMs`, never while a cut's state is captured (a merge operator's idle ticks). */
  readonly progressEveryMs?: number;
  handleProgress?(now: number): void;
}
