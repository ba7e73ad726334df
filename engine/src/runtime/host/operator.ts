/**
 * The contract between the OperatorHost and the operator it runs (docs/architecture.md, "The
 * engine's folders"; docs/decisions/0045-operator-host.md). As in Arroyo, the host does what every operator needs —
 * output, its backpressure gate, pane counts, pipeline lag, the stop with its final checkpoint, the
 * connection — and the operator implements only its own handlers: start reading, process its input
 * (each operator's input is its own: an interleave of TM_EVENTS partitions, one TM_PARTIALS subject),
 * judge progress, the checkpointed state it owns (one explicit type per operator:
 * worker/worker-state.ts, merge/merge-state.ts) and restoring it.
 */
import type { BodyBuffers } from "../output/body-buffers.js";
import type { GroupMessage } from "../output/emit-group.js";
import type { GatedOutput, OutputGate } from "../output/output-gate.js";
import type { PublishStats } from "../output/pane-sink.js";
import type { HoldCause } from "../output/input-hold.js";
import type { PipelineLag } from "../status/pipeline-lag.js";
import type { OperatorLog } from "../operator-log.js";
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
  /** Wall clock − log time as records are handled (tidemark_*_pipeline_lag_seconds, tm.status). */
  readonly pipelineLag: PipelineLag;
  readonly log: OperatorLog;
  readonly clock: () => number;
  /** Shut while an output is saturated; an operator reads nothing further meanwhile (built after the operator). */
  gate(): OutputGate;
  /** True while the pane sink or one of the operator's own outputs is saturated (its window full). */
  outputSaturated(): boolean;
  /** Resolves once everything published so far (panes and the operator's own outputs) is acknowledged. */
  flushOutput(): Promise<void>;
}

/** The handlers an operator implements; the host calls them. */
export interface Operator {
  /** The operator's id (config `worker`, flag --worker): its checkpoints, acks and tm.status carry it. */
  readonly operatorId: string;
  /** Records handled: events read, or the events the merged partials stand for. */
  readonly eventsTotal: number;
  /** Its own outputs beside the pane sink, gated and flushed with it. */
  readonly outputs: readonly OperatorOutput[];
  /** Starts reading its input. */
  onStart(): void;
  /** Stops reading (the first step of a stop). */
  onStop(): Promise<void>;
  /** The final checkpoint of a stop, before `deadline`; false when the deadline came first (no file). */
  handleFinalCheckpoint(deadline: Promise<false>): Promise<boolean>;
  /** The aligned checkpoint cut here and not yet durable (null: none). */
  checkpointWaiting(): CheckpointWaiting | null;
  /** A saturated output has room again: the input may flow. */
  onOutputOpen(): void;
  /** The connection to NATS dropped / came back (its consumers are recreated from their sequences). */
  onConnectionLost(): void;
  onConnectionRestored(): void;
}
